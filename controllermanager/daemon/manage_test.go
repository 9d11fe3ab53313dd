package daemon

import (
	"log/slog"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/client/workqueue"
)

// decider is a Controller with just what podsShouldBeOnNode uses.
func decider(clk *clocktesting.FakeClock) *Controller {
	return &Controller{backoff: newBackoff(clk), queue: workqueue.New[string](clk), clock: clk,
		rec: record.New(nil, "daemonset-controller", "", slog.New(slog.DiscardHandler)), log: slog.New(slog.DiscardHandler)}
}

func TestPodsShouldBeOnNode(t *testing.T) {
	worker := map[string]string{"role": "worker"}
	aged := func(p *corev1.Pod, age time.Duration) *corev1.Pod {
		p.CreationTimestamp = metav1.NewTime(t0.Add(-age))
		return p
	}
	deleting := func(p *corev1.Pod) *corev1.Pod { p.DeletionTimestamp = &metav1.Time{Time: t0}; return p }
	renamed := func(p *corev1.Pod, name string) *corev1.Pod { p.Name = name; return p }
	surging := rolling(intstr.FromInt32(0), intstr.FromInt32(1))
	tests := []struct {
		name       string
		ds         *appsv1.DaemonSet
		node       *corev1.Node
		pods       []*corev1.Pod
		wantCreate bool
		wantDelete []string
	}{
		{"a fitting node without a pod gets one", testDS(), testNode("a", nil), nil, true, nil},
		{"a fitting node with its pod is left alone", testDS(), testNode("a", nil), []*corev1.Pod{daemonPod("a", "new", time.Hour)}, false, nil},
		{"a second pod goes, the oldest stays", testDS(), testNode("a", nil),
			[]*corev1.Pod{aged(renamed(daemonPod("a", "new", time.Hour), "young"), time.Minute), aged(renamed(daemonPod("a", "new", time.Hour), "old"), time.Hour)},
			false, []string{"young"}},
		{"a failed pod is deleted, and replaced next time", testDS(), testNode("a", nil),
			[]*corev1.Pod{phase(daemonPod("a", "new", -1), corev1.PodFailed)}, false, []string{"a-new"}},
		{"a succeeded pod too", testDS(), testNode("a", nil),
			[]*corev1.Pod{phase(daemonPod("a", "new", -1), corev1.PodSucceeded)}, false, []string{"a-new"}},
		{"a pod being deleted is waited for, not replaced yet", testDS(), testNode("a", nil),
			[]*corev1.Pod{deleting(daemonPod("a", "new", time.Hour))}, false, nil},
		{"a node that stops fitting loses its pods", func() *appsv1.DaemonSet {
			ds := testDS()
			ds.Spec.Template.Spec.NodeSelector = worker
			return ds
		}(), testNode("a", nil), []*corev1.Pod{daemonPod("a", "old", time.Hour), daemonPod("a", "new", time.Hour)}, false, []string{"a-old", "a-new"}},
		{"a node that does not fit and has no pod needs nothing", func() *appsv1.DaemonSet {
			ds := testDS()
			ds.Spec.Template.Spec.NodeSelector = worker
			return ds
		}(), testNode("a", nil), nil, false, nil},
		{"surging, a node keeps an old and a new pod while the new one is not ready", surging, testNode("a", nil),
			[]*corev1.Pod{daemonPod("a", "old", time.Hour), daemonPod("a", "new", -1)}, false, nil},
		{"surging, the old pod goes once the new one is available", surging, testNode("a", nil),
			[]*corev1.Pod{daemonPod("a", "old", time.Hour), daemonPod("a", "new", time.Hour)}, false, []string{"a-old"}},
		{"surging, a not-ready old pod goes at once", surging, testNode("a", nil),
			[]*corev1.Pod{daemonPod("a", "old", -1), daemonPod("a", "new", -1)}, false, []string{"a-old"}},
		{"surging, a node whose only pod is being deleted gets a new one at once", surging, testNode("a", nil),
			[]*corev1.Pod{deleting(daemonPod("a", "old", time.Hour))}, true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := decider(clocktesting.NewFakeClock(t0))
			w := c.podsShouldBeOnNode(tc.node, tc.pods, tc.ds, "h2", placementOf(tc.ds))
			var deleted []string
			for _, p := range w.delete {
				deleted = append(deleted, p.Name)
			}
			if w.create != tc.wantCreate || !slices.Equal(deleted, tc.wantDelete) {
				t.Errorf("create %v, delete %v; want create %v, delete %v", w.create, deleted, tc.wantCreate, tc.wantDelete)
			}
		})
	}
}

func TestAFailedPodIsDeletedOncePerBackoff(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := decider(clk)
	ds, node := testDS(), testNode("a", nil)
	failed := []*corev1.Pod{phase(daemonPod("a", "new", -1), corev1.PodFailed)}
	for _, step := range []struct {
		name   string
		wait   time.Duration
		delete bool
	}{
		{"the first failure is deleted at once", 0, true},
		{"its replacement failing within a second waits", 500 * time.Millisecond, false},
		{"after the second it is deleted", time.Second, true},
		{"the next waits two seconds", time.Second, false},
		{"and then goes", time.Second, true},
	} {
		clk.Step(step.wait)
		w := c.podsShouldBeOnNode(node, failed, ds, "h2", placementOf(ds))
		if got := len(w.delete) == 1; got != step.delete {
			t.Fatalf("%s: deleted = %v, want %v", step.name, got, step.delete)
		}
	}
}

func phase(p *corev1.Pod, ph corev1.PodPhase) *corev1.Pod { p.Status.Phase = ph; return p }
