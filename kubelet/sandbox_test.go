package kubelet

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/testserver"
	"github.com/mkube/mkube/kubelet/kuberuntime"
)

// TestAPodRunsWithItsRuntimeClassHandlerOrWaitsForOne: the kubelet gives
// the runtime the handler of the pod's RuntimeClass; a handler the
// runtime has not got leaves the pod Pending with containerd's error in a
// FailedCreatePodSandBox event, as on a real node.
func TestAPodRunsWithItsRuntimeClassHandlerOrWaitsForOne(t *testing.T) {
	c := testCluster(t)
	ctx := context.Background()
	for name, handler := range map[string]string{"runc": "runc", "gvisor": "runsc"} {
		rc := &nodev1.RuntimeClass{TypeMeta: metav1.TypeMeta{APIVersion: "node.k8s.io/v1", Kind: "RuntimeClass"},
			ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: handler}
		if err := c.Create(ctx, kuberuntime.RuntimeClasses, "", rc, nil); err != nil {
			t.Fatal(err)
		}
	}
	startKubelet(t, c, t.TempDir())
	for _, p := range []struct{ pod, class string }{{"plain", "runc"}, {"sandboxed", "gvisor"}} {
		class := p.class
		pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: p.pod, Namespace: "default"},
			Spec: corev1.PodSpec{NodeName: "node01", RuntimeClassName: &class,
				Containers: []corev1.Container{{Name: "web", Image: "nginx:1.25"}}}}
		if err := c.Create(ctx, client.Pods, "default", pod, nil); err != nil {
			t.Fatal(err)
		}
	}
	testserver.Eventually(t, "the pod of handler runc is Running", func() (bool, string) {
		phase := getPod(t, c, "plain").Status.Phase
		return phase == corev1.PodRunning, "phase " + string(phase)
	})
	want := `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "runsc" is configured`
	testserver.Eventually(t, "the pod of handler runsc has a FailedCreatePodSandBox event", func() (bool, string) {
		var list corev1.EventList
		if err := c.List(ctx, client.Events, "default",
			client.ListOptions{FieldSelector: "involvedObject.name=sandboxed,reason=FailedCreatePodSandBox"}, &list); err != nil {
			return false, err.Error()
		}
		for _, ev := range list.Items {
			if ev.Message == want && ev.Type == corev1.EventTypeWarning {
				return true, ""
			}
		}
		return false, fmt.Sprintf("events %+v", list.Items)
	})
	pod := getPod(t, c, "sandboxed")
	if pod.Status.Phase != corev1.PodPending || pod.Status.PodIP != "" ||
		len(pod.Status.ContainerStatuses) != 1 || pod.Status.ContainerStatuses[0].State.Waiting == nil ||
		!strings.Contains(pod.Status.ContainerStatuses[0].State.Waiting.Reason, "ContainerCreating") {
		t.Fatalf("the pod of handler runsc: %+v", pod.Status)
	}
}
