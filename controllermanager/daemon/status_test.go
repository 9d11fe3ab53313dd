package daemon

import (
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDaemonStatusCountsNodeByNode(t *testing.T) {
	ds := testDS()
	ds.Spec.MinReadySeconds = 60
	ds.Spec.Template.Spec.NodeSelector = map[string]string{"role": "worker"}
	worker := map[string]string{"role": "worker"}
	nodes := []*corev1.Node{testNode("a", worker), testNode("b", worker), testNode("c", worker), testNode("d", worker), testNode("e", nil)}
	byNode := map[string][]*corev1.Pod{
		"a": {daemonPod("a", "new", time.Hour)},      // ready, available, up to date
		"b": {daemonPod("b", "old", 10*time.Second)}, // ready, not yet available, old
		"c": {daemonPod("c", "new", -1)},             // not ready
		"e": {daemonPod("e", "new", time.Hour)},      // e does not match: misscheduled
		// d has none
	}
	got := daemonStatus(ds, nodes, byNode, "h2", metav1.NewTime(t0))
	want := appsv1.DaemonSetStatus{DesiredNumberScheduled: 4, CurrentNumberScheduled: 3, NumberReady: 2, NumberAvailable: 1,
		UpdatedNumberScheduled: 2, NumberUnavailable: 3, NumberMisscheduled: 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("status\n %+v\nwant\n %+v", got, want)
	}
}

func TestTheOldestBoundPodSpeaksForItsNode(t *testing.T) {
	old := daemonPod("a", "old", time.Hour)
	old.CreationTimestamp = metav1.NewTime(t0.Add(-time.Hour))
	unbound := daemonPod("a", "new", -1)
	unbound.Spec.NodeName = ""
	unbound.CreationTimestamp = metav1.NewTime(t0.Add(-2 * time.Hour))
	newer := daemonPod("a", "new", -1)
	newer.Name = "a-newer"
	newer.CreationTimestamp = metav1.NewTime(t0)
	got := daemonStatus(testDS(), []*corev1.Node{testNode("a", nil)}, map[string][]*corev1.Pod{"a": {newer, unbound, old}}, "h2", metav1.NewTime(t0))
	if got.NumberReady != 1 || got.UpdatedNumberScheduled != 0 {
		t.Errorf("ready %d, updated %d: want the old ready pod counted (bound before unbound, then oldest)", got.NumberReady, got.UpdatedNumberScheduled)
	}
}
