package metricsservertest

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/fakekubelet"
	"github.com/mkube/mkube/internal/logging"
	"github.com/mkube/mkube/internal/testserver"
	"github.com/mkube/mkube/metricsserver"
)

// Cluster is the API server with nodes whose kubelets are fakes, and
// the metrics server, started on the test's host, behind the Service
// and APIService of addons/metrics-server.yaml: the API server reaches it
// through the kubelet of its pod's node, as it reaches any aggregated
// server.
type Cluster struct {
	API      *client.Client
	Server   *testserver.Server
	Metrics  *metricsserver.Server
	Kubelets map[string]*fakekubelet.Kubelet
}

// StartCluster runs it with nodes named, the metrics server's pod on the first.
func StartCluster(t testing.TB, ctx context.Context, clock *testingclock.FakeClock, nodes ...string) *Cluster {
	ts := testserver.StartServer(t)
	c := &Cluster{API: client.New(ts.URL, "metrics-server-test"), Server: ts, Kubelets: map[string]*fakekubelet.Kubelet{}}
	opts, err := metricsserver.ParseFlags([]string{"--cert-dir=/tmp", "--secure-port=10250", "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
		"--kubelet-use-node-status-port", "--metric-resolution=15s", "--kubelet-insecure-tls"})
	if err != nil {
		t.Fatal(err)
	}
	kubelets, err := metricsserver.KubeletClient(&rest.Config{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	c.Metrics, err = metricsserver.New(ctx, metricsserver.Config{Options: opts, API: c.API, Kubelets: kubelets, Clock: clock, Log: logging.New("metrics-server", "error")})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := metricsserver.ServingCert(opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", metricsserver.TLSConfig(cert))
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: c.Metrics.TLSHandler()}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })

	for _, name := range nodes {
		k := fakekubelet.Start(t, "/metrics/resource")
		k.ForwardTo = ln.Addr().String()
		c.Kubelets[name] = k
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
		c.Create(t, ctx, client.Nodes, "", node)
		node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
		node.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}
		node.Status.Allocatable = node.Status.Capacity
		node.Status.DaemonEndpoints.KubeletEndpoint.Port = k.Port()
		if err := c.API.UpdateStatus(ctx, client.Nodes, "", name, node, node); err != nil {
			t.Fatal(err)
		}
	}
	// The metrics server's pod, on the first node: where the Service's
	// endpoint, and so the aggregator's port-forward, is.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "metrics-server-0", Labels: map[string]string{"k8s-app": "metrics-server"}},
		Spec: corev1.PodSpec{NodeName: nodes[0], Containers: []corev1.Container{{Name: "metrics-server", Image: "registry.k8s.io/metrics-server/metrics-server:v0.8.0"}}}}
	c.Create(t, ctx, client.Pods, "kube-system", pod)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "metrics-server"},
		Spec: corev1.ServiceSpec{Selector: pod.Labels, Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromString("https")}}}}
	c.Create(t, ctx, client.Services, "kube-system", svc)
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "metrics-server-abcde",
		Labels: map[string]string{discoveryv1.LabelServiceName: "metrics-server"}}, AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.1.5"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			NodeName: ptr.To(nodes[0]), TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "kube-system", Name: pod.Name}}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To[int32](10250)}}}
	if code := ts.Do(http.MethodPost, "/apis/discovery.k8s.io/v1/namespaces/kube-system/endpointslices", "application/json", mustJSON(t, slice), nil); code != http.StatusCreated {
		t.Fatalf("endpointslice: %d", code)
	}
	apiService := `{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":"v1beta1.metrics.k8s.io"},
		"spec":{"group":"metrics.k8s.io","groupPriorityMinimum":100,"insecureSkipTLSVerify":true,
		"service":{"name":"metrics-server","namespace":"kube-system"},"version":"v1beta1","versionPriority":100}}`
	if code := ts.Do(http.MethodPost, "/apis/apiregistration.k8s.io/v1/apiservices", "application/json", apiService, nil); code != http.StatusCreated {
		t.Fatalf("apiservice: %d", code)
	}
	if !c.Metrics.Start(ctx) {
		t.Fatal("informers did not sync")
	}
	return c
}

func (c *Cluster) Create(t testing.TB, ctx context.Context, r client.Resource, ns string, obj runtime.Object) {
	t.Helper()
	if err := c.API.Create(ctx, r, ns, obj, obj); err != nil {
		t.Fatal(err)
	}
}

func mustJSON(t testing.TB, v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// WaitForPods waits until the metrics server follows n pods.
func (c *Cluster) WaitForPods(t testing.TB, n int) {
	testserver.Eventually(t, "the metrics server sees the pods", func() (bool, string) {
		return c.Metrics.FollowedPods() == n, ""
	})
}
