package kubelet

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/testserver"
	"github.com/mkube/mkube/kubelet/internal/kubelettest"
)

// A pod created with spec.nodeName (no scheduler looked) asking for a
// host port another pod holds is rejected by the kubelet, as Kubernetes
// does it; once the holder is gone, a new pod with that port runs. A
// restarted kubelet counts the pods it finds running.
func TestTheKubeletRejectsAPodWhoseHostPortIsTaken(t *testing.T) {
	c := testCluster(t)
	ctx := context.Background()
	stop := startKubelet(t, c, t.TempDir())
	create := func(name string) {
		t.Helper()
		pod := kubelettest.AdmissionPod(name, kubelettest.HostPort(21017, ""))
		pod.UID = ""
		if err := c.Create(ctx, client.Pods, "default", pod, nil); err != nil {
			t.Fatal(err)
		}
	}
	phase := func(name string, want corev1.PodPhase) func() (bool, string) {
		return func() (bool, string) {
			p := getPod(t, c, name)
			return p.Status.Phase == want, fmt.Sprintf("phase %s reason %q", p.Status.Phase, p.Status.Reason)
		}
	}
	create("holder")
	testserver.Eventually(t, "holder is Running", phase("holder", corev1.PodRunning))

	// After a restart, the kubelet knows holder holds the port.
	stop()
	startKubelet(t, c, t.TempDir())
	create("second")
	testserver.Eventually(t, "second is rejected", phase("second", corev1.PodFailed))
	st := getPod(t, c, "second").Status
	if st.Reason != "NodePorts" || st.Message != "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports" ||
		len(st.ContainerStatuses) != 0 || st.PodIP != "" {
		t.Errorf("status of the rejected pod: %+v", st)
	}
	testserver.Eventually(t, "second has a NodePorts event", hasEvents(t, c, "second", "NodePorts"))

	if err := c.Delete(ctx, client.Pods, "default", "holder", nil); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "holder is gone", func() (bool, string) {
		err := c.Get(ctx, client.Pods, "default", "holder", &corev1.Pod{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get holder: %v", err)
	})
	create("third")
	testserver.Eventually(t, "third, asking the freed port, runs", phase("third", corev1.PodRunning))
}
