package daemon

import (
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func rolling(unavailable, surge intstr.IntOrString) *appsv1.DaemonSet {
	ds := testDS()
	ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &unavailable, MaxSurge: &surge}}
	return ds
}

func TestUpdateBoundsScaleAndRoundUp(t *testing.T) {
	n, pct := intstr.FromInt32, intstr.FromString
	tests := []struct {
		name                       string
		ds                         *appsv1.DaemonSet
		desired                    int
		wantSurge, wantUnavailable int
	}{
		{"the default: one node at a time", rolling(n(1), n(0)), 10, 0, 1},
		{"30% of 5 nodes is 1.5, rounded up to 2", rolling(pct("30%"), n(0)), 5, 0, 2},
		{"10% of 3 nodes rounds up to 1", rolling(pct("10%"), n(0)), 3, 0, 1},
		{"20% surge of 5 nodes is 1", rolling(n(0), pct("20%")), 5, 1, 0},
		{"100% surge updates every node at once", rolling(n(0), pct("100%")), 4, 4, 0},
		{"nothing allowed (stored before validation) still lets one go", rolling(n(0), n(0)), 3, 0, 1},
		{"no nodes, no bounds", rolling(pct("0%"), pct("0%")), 0, 0, 0},
		{"OnDelete has no bounds", &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}}}, 3, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			surge, unavailable, err := updateBounds(tc.ds, tc.desired)
			if err != nil || surge != tc.wantSurge || unavailable != tc.wantUnavailable {
				t.Errorf("updateBounds = surge %d, unavailable %d, %v; want %d, %d", surge, unavailable, err, tc.wantSurge, tc.wantUnavailable)
			}
		})
	}
	if allowsSurge(rolling(n(1), n(0))) || !allowsSurge(rolling(n(0), pct("1%"))) {
		t.Error("allowsSurge: want false without maxSurge, true with 1% (1% of one node rounds up to 1)")
	}
}

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// daemonPod is a pod of ds for node: of the current template ("new",
// hash h2) or an old one ("old", h1), ready since readySince before t0
// (negative: not ready).
func daemonPod(node, version string, readySince time.Duration) *corev1.Pod {
	hash := map[string]string{"new": "h2", "old": "h1"}[version]
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: node + "-" + version,
		Labels: map[string]string{"app": "agent", hashLabel: hash}}, Spec: corev1.PodSpec{NodeName: node}}
	p.Status.Phase = corev1.PodRunning
	if readySince >= 0 {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(t0.Add(-readySince))}}
	}
	return p
}

func TestPlanRollingUpdate(t *testing.T) {
	n, pct := intstr.FromInt32, intstr.FromString
	const ready, unready = time.Hour, time.Duration(-1)
	type pods = map[string][]*corev1.Pod
	tests := []struct {
		name         string
		ds           *appsv1.DaemonSet
		byNode       pods
		notWanted    []string // nodes that should no longer run the daemon
		wantDelete   []string
		wantCreateOn []string
	}{
		{"maxUnavailable 1: one available old pod is deleted", rolling(n(1), n(0)),
			pods{"a": {daemonPod("a", "old", ready)}, "b": {daemonPod("b", "old", ready)}, "c": {daemonPod("c", "old", ready)}},
			nil, []string{"a-old"}, nil},
		{"an emptied node counts as unavailable: nothing more until it is refilled", rolling(n(1), n(0)),
			pods{"a": nil, "b": {daemonPod("b", "old", ready)}},
			nil, nil, nil},
		{"a new pod not yet available holds the update", rolling(n(1), n(0)),
			pods{"a": {daemonPod("a", "new", unready)}, "b": {daemonPod("b", "old", ready)}},
			nil, nil, nil},
		{"once it is available the next old pod goes", rolling(n(1), n(0)),
			pods{"a": {daemonPod("a", "new", ready)}, "b": {daemonPod("b", "old", ready)}},
			nil, []string{"b-old"}, nil},
		{"old pods that are not available go at once, beyond maxUnavailable", rolling(n(1), n(0)),
			pods{"a": {daemonPod("a", "old", unready)}, "b": {daemonPod("b", "old", unready)}, "c": {daemonPod("c", "old", ready)}},
			nil, []string{"a-old", "b-old"}, nil},
		{"maxUnavailable 50% of 4 deletes two", rolling(pct("50%"), n(0)),
			pods{"a": {daemonPod("a", "old", ready)}, "b": {daemonPod("b", "old", ready)}, "c": {daemonPod("c", "old", ready)}, "d": {daemonPod("d", "old", ready)}},
			nil, []string{"a-old", "b-old"}, nil},
		{"a node with two pods is left to the manage loop and counts as unavailable", rolling(n(1), n(0)),
			pods{"a": {daemonPod("a", "old", ready), daemonPod("a", "new", ready)}, "b": {daemonPod("b", "old", ready)}},
			nil, nil, nil},
		{"maxSurge 1: one new pod beside an old one", rolling(n(0), n(1)),
			pods{"a": {daemonPod("a", "old", ready)}, "b": {daemonPod("b", "old", ready)}},
			nil, nil, []string{"a"}},
		{"surging: the new pod not yet available holds the next surge", rolling(n(0), n(1)),
			pods{"a": {daemonPod("a", "old", ready), daemonPod("a", "new", unready)}, "b": {daemonPod("b", "old", ready)}},
			nil, nil, nil},
		{"surging: the old pod goes once the new one is available, and the next node surges", rolling(n(0), n(1)),
			pods{"a": {daemonPod("a", "old", ready), daemonPod("a", "new", ready)}, "b": {daemonPod("b", "old", ready)}},
			nil, []string{"a-old"}, []string{"b"}},
		{"surging: a node whose old pod is unavailable gets its new pod at once", rolling(n(0), n(1)),
			pods{"a": {daemonPod("a", "old", ready), daemonPod("a", "new", unready)}, "b": {daemonPod("b", "old", unready)}},
			nil, nil, []string{"b"}},
		{"surging: an unavailable old pod of a node that no longer fits is deleted", rolling(n(0), n(1)),
			pods{"a": {daemonPod("a", "old", unready)}, "b": {daemonPod("b", "new", ready)}},
			[]string{"a"}, []string{"a-old"}, nil},
		{"surging: an available one stays until enough pods elsewhere are available", rolling(n(0), n(1)),
			pods{"a": {daemonPod("a", "old", ready)}, "b": {daemonPod("b", "new", unready)}},
			[]string{"a"}, nil, nil},
		{"surging: then it goes", rolling(n(0), n(1)),
			pods{"a": {daemonPod("a", "old", ready)}, "b": {daemonPod("b", "new", ready)}},
			[]string{"a"}, []string{"a-old"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			desired := len(tc.byNode) - len(tc.notWanted)
			surge, unavailable, _ := updateBounds(tc.ds, desired)
			shouldRun := func(node string) bool { return !slices.Contains(tc.notWanted, node) }
			plan := planRollingUpdate(tc.ds, tc.byNode, "h2", surge, unavailable, desired, shouldRun, metav1.NewTime(t0))
			var deleted []string
			for _, p := range plan.delete {
				deleted = append(deleted, p.Name)
			}
			if !slices.Equal(deleted, tc.wantDelete) || !slices.Equal(plan.createOn, tc.wantCreateOn) {
				t.Errorf("delete %v, create on %v; want delete %v, create on %v", deleted, plan.createOn, tc.wantDelete, tc.wantCreateOn)
			}
		})
	}
}

func TestMinReadySecondsDelaysAvailability(t *testing.T) {
	ds := rolling(intstr.FromInt32(1), intstr.FromInt32(0))
	ds.Spec.MinReadySeconds = 30
	fresh := daemonPod("b", "new", 10*time.Second) // ready for 10s of 30
	plan := planRollingUpdate(ds, map[string][]*corev1.Pod{"a": {daemonPod("a", "old", time.Hour)}, "b": {fresh}}, "h2", 0, 1, 2,
		func(string) bool { return true }, metav1.NewTime(t0))
	if len(plan.delete) != 0 {
		t.Errorf("deleted %v while the new pod on b is ready but not yet available", plan.delete)
	}
	if !isAvailable(fresh, 5, metav1.NewTime(t0)) || isAvailable(fresh, 30, metav1.NewTime(t0)) {
		t.Error("isAvailable: a pod ready for 10s is available after 5 minReadySeconds, not after 30")
	}
}
