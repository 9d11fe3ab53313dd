package kubelet

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/testserver"
	"github.com/mkube/mkube/kubelet/nodestatus"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// testCluster is an API server on embedded etcd, as cmd/apiserver runs it.
func testCluster(t *testing.T) *client.Client {
	t.Helper()
	if testing.Short() {
		t.Skip("starts etcd and an API server")
	}
	return client.New(testserver.Start(t), "kubelet-test")
}

// startKubelet runs a kubelet for node01, with its in-process runtime
// writing container logs under podLogsDir, until stop is called or the
// test ends. It must stop before the test server closes: Close waits for
// the kubelet's open watch.
func startKubelet(t *testing.T, c *client.Client, podLogsDir string) (stop func()) {
	t.Helper()
	capacity, _ := Capacity("4", "8Gi", 110)
	k, err := New(c, Config{NodeName: "node01", Capacity: capacity,
		Labels: map[string]string{"disktype": "ssd"}, Taints: []corev1.Taint{{Key: "dedicated", Value: "web", Effect: corev1.TaintEffectPreferNoSchedule}},
		StatusInterval: 100 * time.Millisecond, PodLogsDir: podLogsDir, Log: slog.New(slog.NewTextHandler(t.Output(), nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func createAndBind(t *testing.T, c *client.Client, name string) {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.25"}}}}
	if err := c.Create(ctx, client.Pods, "default", pod, nil); err != nil {
		t.Fatal(err)
	}
	// Step 10, as the scheduler does it.
	binding := &corev1.Binding{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Binding"},
		ObjectMeta: metav1.ObjectMeta{Name: name}, Target: corev1.ObjectReference{Kind: "Node", Name: "node01"}}
	if err := c.Post(ctx, client.Pods, "default", name, "binding", binding); err != nil {
		t.Fatal(err)
	}
}

func getPod(t *testing.T, c *client.Client, name string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	if err := c.Get(context.Background(), client.Pods, "default", name, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

func eventReasons(t *testing.T, c *client.Client, name string) []string {
	t.Helper()
	var list corev1.EventList
	if err := c.List(context.Background(), client.Events, "default",
		client.ListOptions{FieldSelector: "involvedObject.name=" + name}, &list); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range list.Items {
		out = append(out, ev.Reason)
	}
	return out
}

// hasEvents is a condition for testserver.Eventually: the pod has events
// of all these reasons.
func hasEvents(t *testing.T, c *client.Client, name string, want ...string) func() (bool, string) {
	return func() (bool, string) {
		have := eventReasons(t, c, name)
		for _, w := range want {
			if !slices.Contains(have, w) {
				return false, fmt.Sprintf("events %v", have)
			}
		}
		return true, ""
	}
}

// TestAPodRunsOnTheFakeNodeAndIsDeletedGracefully walks steps 10 to 13
// against a real API server, restarts the kubelet, changes an image, and
// deletes a pod gracefully.
func TestAPodRunsOnTheFakeNodeAndIsDeletedGracefully(t *testing.T) {
	c := testCluster(t)
	ctx := context.Background()
	podLogs := t.TempDir() // one node: its logs outlive a kubelet restart
	stop := startKubelet(t, c, podLogs)

	node := &corev1.Node{}
	testserver.Eventually(t, "node01 is registered and Ready", func() (bool, string) {
		if err := c.Get(ctx, client.Nodes, "", "node01", node); err != nil {
			return false, err.Error()
		}
		return nodestatus.NodeReady(node.Status), fmt.Sprintf("conditions %v", node.Status.Conditions)
	})
	if node.Labels["disktype"] != "ssd" || node.Labels[corev1.LabelHostname] != "node01" || len(node.Spec.Taints) != 1 || node.Spec.PodCIDR != "10.244.1.0/24" {
		t.Errorf("node labels %v taints %v podCIDR %q", node.Labels, node.Spec.Taints, node.Spec.PodCIDR)
	}
	lease := &coordinationv1.Lease{}
	var firstRenewal time.Time
	testserver.Eventually(t, "the node lease is renewed", func() (bool, string) {
		if err := c.Get(ctx, client.Leases, corev1.NamespaceNodeLease, "node01", lease); err != nil {
			return false, err.Error()
		}
		if lease.Spec.RenewTime == nil {
			return false, "no renewTime"
		}
		if firstRenewal.IsZero() {
			firstRenewal = lease.Spec.RenewTime.Time
		}
		return lease.Spec.RenewTime.After(firstRenewal), "renewTime " + lease.Spec.RenewTime.String()
	})
	if *lease.Spec.HolderIdentity != "node01" || *lease.Spec.LeaseDurationSeconds != 40 || len(lease.OwnerReferences) != 1 || lease.OwnerReferences[0].UID != node.UID {
		t.Errorf("lease spec %+v owners %+v", lease.Spec, lease.OwnerReferences)
	}

	// Steps 10-13: bind a pod to node01; the kubelet runs it.
	createAndBind(t, c, "web-1")
	var pod *corev1.Pod
	testserver.Eventually(t, "web-1 is Running", func() (bool, string) {
		pod = getPod(t, c, "web-1")
		return pod.Status.Phase == corev1.PodRunning, "phase " + string(pod.Status.Phase)
	})
	cs := pod.Status.ContainerStatuses
	if len(cs) != 1 || cs[0].State.Running == nil || !cs[0].Ready || pod.Status.HostIP != "10.240.1.1" ||
		!netip.MustParsePrefix("10.244.1.0/24").Contains(netip.MustParseAddr(pod.Status.PodIP)) {
		t.Errorf("status of the running pod: %+v", pod.Status)
	}
	testserver.Eventually(t, "web-1 has the kubelet's events", hasEvents(t, c, "web-1", "Pulling", "Pulled", "Created", "Started"))
	testserver.Eventually(t, "node01 reports the pulled image", func() (bool, string) {
		n := &corev1.Node{}
		if err := c.Get(ctx, client.Nodes, "", "node01", n); err != nil {
			return false, err.Error()
		}
		return len(n.Status.Images) == 1 && n.Status.Images[0].Names[0] == "docker.io/library/nginx:1.25", fmt.Sprintf("images %v", n.Status.Images)
	})

	// Restart the kubelet: the running pod keeps its IP and its status.
	stop()
	before := getPod(t, c, "web-1")
	startKubelet(t, c, podLogs)
	createAndBind(t, c, "web-2")
	var second *corev1.Pod
	testserver.Eventually(t, "web-2 is Running after the restart", func() (bool, string) {
		second = getPod(t, c, "web-2")
		return second.Status.Phase == corev1.PodRunning, "phase " + string(second.Status.Phase)
	})
	if second.Status.PodIP == before.Status.PodIP {
		t.Errorf("web-2 got web-1's IP %s", second.Status.PodIP)
	}
	if after := getPod(t, c, "web-1"); after.ResourceVersion != before.ResourceVersion {
		t.Errorf("the restarted kubelet rewrote web-1's status:\nbefore %+v\nafter  %+v", before.Status, after.Status)
	}
	testserver.Eventually(t, "web-2 finds the image already present", func() (bool, string) {
		var list corev1.EventList
		if err := c.List(ctx, client.Events, "default", client.ListOptions{FieldSelector: "involvedObject.name=web-2,reason=Pulled"}, &list); err != nil {
			return false, err.Error()
		}
		var msgs []string
		for _, ev := range list.Items {
			msgs = append(msgs, ev.Message)
		}
		return len(msgs) == 1 && msgs[0] == `Container image "nginx:1.25" already present on machine`, fmt.Sprintf("Pulled events %q", msgs)
	})

	// Seed 000: "the image was upgraded: the kubelet fetches the latest
	// image and loads it". The container restarts with the new image.
	patch := []byte(`{"spec":{"containers":[{"name":"web","image":"nginx:1.26"}]}}`)
	if err := c.Patch(ctx, client.Pods, "default", "web-2", types.StrategicMergePatchType, patch, nil); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "web-2 runs nginx:1.26", func() (bool, string) {
		cs := getPod(t, c, "web-2").Status.ContainerStatuses
		return len(cs) == 1 && cs[0].Image == "nginx:1.26" && cs[0].State.Running != nil &&
			cs[0].RestartCount == 1 && cs[0].LastTerminationState.Terminated != nil, fmt.Sprintf("container statuses %+v", cs)
	})
	testserver.Eventually(t, "web-2 has a Killing event", hasEvents(t, c, "web-2", "Killing"))

	// Graceful deletion: the API server only marks the pod; the kubelet
	// stops its containers and deletes it for good.
	if err := c.Delete(ctx, client.Pods, "default", "web-1", nil); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "web-1 is gone", func() (bool, string) {
		err := c.Get(ctx, client.Pods, "default", "web-1", &corev1.Pod{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get web-1: %v", err)
	})
	testserver.Eventually(t, "web-1 has a Killing event", hasEvents(t, c, "web-1", "Killing"))
}
