package endpointslice_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager"
	"github.com/mkube/mkube/controllermanager/garbagecollector"
	"github.com/mkube/mkube/internal/testserver"
)

// This test runs the controller manager against a real API server in the
// test process and plays the kubelet's part by hand: pods get an IP and
// a Ready condition through the status subresource.

func TestEndpointSlicesFollowAServicesPodsAndGoWithIt(t *testing.T) {
	c := client.New(testserver.Start(t), "endpointslice-test")
	logs := &testserver.LogBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	testserver.Background(t, func(ctx context.Context) {
		controllermanager.Run(ctx, c, log, controllermanager.Options{GarbageCollector: garbagecollector.Options{Workers: 2}})
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(logs.String())
		}
	})
	ctx := context.Background()
	node := &corev1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: "node01", Labels: map[string]string{corev1.LabelTopologyZone: "zone-a"}}}
	if err := c.Create(ctx, client.Nodes, "", node, nil); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}}}
	if err := c.Create(ctx, client.Services, "default", svc, svc); err != nil {
		t.Fatal(err)
	}
	slices := func() []discoveryv1.EndpointSlice {
		var list discoveryv1.EndpointSliceList
		if err := c.List(ctx, client.EndpointSlices, "default", client.ListOptions{LabelSelector: "kubernetes.io/service-name=web"}, &list); err != nil {
			t.Fatal(err)
		}
		return list.Items
	}
	describe := func(items []discoveryv1.EndpointSlice) string {
		var out []string
		for _, s := range items {
			var eps []string
			for _, ep := range s.Endpoints {
				eps = append(eps, fmt.Sprintf("%s ready=%v", ep.Addresses[0], *ep.Conditions.Ready))
			}
			out = append(out, fmt.Sprintf("%s %s ports=%d [%s]", s.Name, s.AddressType, len(s.Ports), strings.Join(eps, ", ")))
		}
		return strings.Join(out, "; ")
	}

	testserver.Eventually(t, "a Service without pods has a placeholder slice", func() (bool, string) {
		items := slices()
		return len(items) == 1 && len(items[0].Endpoints) == 0 && len(items[0].Ports) == 0, describe(items)
	})
	placeholder := slices()[0].Name

	for i, ip := range []string{"10.244.1.2", "10.244.1.3"} {
		runningPod(t, c, fmt.Sprintf("web-%d", i+1), ip)
	}
	testserver.Eventually(t, "the placeholder becomes the slice of both pods", func() (bool, string) {
		items := slices()
		return len(items) == 1 && items[0].Name == placeholder && len(items[0].Endpoints) == 2, describe(items)
	})
	s := slices()[0]
	ep, port := s.Endpoints[0], s.Ports[0]
	if ep.Addresses[0] != "10.244.1.2" || !*ep.Conditions.Ready || !*ep.Conditions.Serving || *ep.Conditions.Terminating ||
		ptr.Deref(ep.NodeName, "") != "node01" || ptr.Deref(ep.Zone, "") != "zone-a" || ep.TargetRef.Name != "web-1" {
		t.Fatalf("endpoint %+v", ep)
	}
	if *port.Name != "http" || *port.Port != 8080 || *port.Protocol != corev1.ProtocolTCP {
		t.Fatalf("port %+v: the Service's targetPort \"http\" is the pods' container port 8080", port)
	}
	if s.Labels[discoveryv1.LabelManagedBy] != "endpointslice-controller.k8s.io" || s.OwnerReferences[0].UID != svc.UID ||
		s.Annotations[corev1.EndpointsLastChangeTriggerTime] == "" {
		t.Fatalf("metadata %+v", s.ObjectMeta)
	}

	// web-2's readiness probe fails: its endpoint stays, not ready.
	patch := []byte(`{"status":{"conditions":[{"type":"Ready","status":"False"}]}}`)
	if err := c.Patch(ctx, client.Pods, "default", "web-2", types.StrategicMergePatchType, patch, nil, "status"); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "web-2 is listed as not ready", func() (bool, string) {
		items := slices()
		d := describe(items)
		return len(items) == 1 && strings.Contains(d, "10.244.1.2 ready=true, 10.244.1.3 ready=false"), d
	})

	if err := c.Delete(ctx, client.Services, "default", "web", nil); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the garbage collector deletes the slices with their Service", func() (bool, string) {
		items := slices()
		return len(items) == 0, describe(items)
	})
}

// runningPod creates a pod serving "http" on 8080 and reports it running
// and ready on node01, as a kubelet would.
func runningPod(t *testing.T, c *client.Client, name, ip string) {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "node01", Containers: []corev1.Container{{Name: "c", Image: "nginx:1.25",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}}}}
	if err := c.Create(ctx, client.Pods, "default", pod, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}}
	if err := c.UpdateStatus(ctx, client.Pods, "default", name, pod, pod); err != nil {
		t.Fatal(err)
	}
}
