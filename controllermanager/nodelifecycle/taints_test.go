package nodelifecycle

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	t0        = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	now       = metav1.NewTime(t0)
	earlier   = metav1.NewTime(t0.Add(-time.Hour))
	userTaint = corev1.Taint{Key: "key1", Value: "value1", Effect: corev1.TaintEffectNoSchedule}
)

func node(ready corev1.ConditionStatus, taints ...corev1.Taint) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node01"}, Spec: corev1.NodeSpec{Taints: taints}}
	if ready != "" {
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready, LastHeartbeatTime: earlier}}
	}
	return n
}

func taintIDs(taints []corev1.Taint) []string {
	out := make([]string, len(taints))
	for i, t := range taints {
		out[i] = t.ToString()
	}
	return out
}

func TestWantTaints(t *testing.T) {
	unreachableNoExec := corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &earlier}
	cordoned := node(corev1.ConditionTrue)
	cordoned.Spec.Unschedulable = true
	pressure := node(corev1.ConditionTrue)
	pressure.Status.Conditions = append(pressure.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue})
	tests := []struct {
		name string
		node *corev1.Node
		want []string
	}{
		{"a Ready node carries no managed taint, and keeps the user's", node(corev1.ConditionTrue, userTaint),
			[]string{"key1=value1:NoSchedule"}},
		{"a node whose kubelet went silent (Ready Unknown) is unreachable: NoSchedule and NoExecute", node(corev1.ConditionUnknown, userTaint),
			[]string{"key1=value1:NoSchedule", "node.kubernetes.io/unreachable:NoSchedule", "node.kubernetes.io/unreachable:NoExecute"}},
		{"a node reporting Ready False is not-ready: NoSchedule and NoExecute", node(corev1.ConditionFalse),
			[]string{"node.kubernetes.io/not-ready:NoSchedule", "node.kubernetes.io/not-ready:NoExecute"}},
		{"a node back to Ready loses the unreachable taints", node(corev1.ConditionTrue, unreachableNoExec),
			nil},
		{"a cordoned node gets the unschedulable taint", cordoned, []string{"node.kubernetes.io/unschedulable:NoSchedule"}},
		{"memory pressure gives its NoSchedule taint", pressure, []string{"node.kubernetes.io/memory-pressure:NoSchedule"}},
		{"a node that never reported has no condition to act on yet", node(""), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := taintIDs(wantTaints(tt.node, now))
			if len(got) != len(tt.want) {
				t.Fatalf("taints = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("taints = %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestWantTaintsKeepsTimeAddedOfATaintAlreadyThere(t *testing.T) {
	have := corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &earlier}
	got := wantTaints(node(corev1.ConditionUnknown, have), now)
	for _, taint := range got {
		switch {
		case taint.Effect != corev1.TaintEffectNoExecute:
		case !taint.TimeAdded.Equal(&earlier):
			t.Errorf("the NoExecute taint's timeAdded moved to %v: tolerationSeconds would restart", taint.TimeAdded)
		}
	}
	fresh := wantTaints(node(corev1.ConditionUnknown), now)
	for _, taint := range fresh {
		if taint.Effect == corev1.TaintEffectNoExecute && (taint.TimeAdded == nil || !taint.TimeAdded.Equal(&now)) {
			t.Errorf("a new NoExecute taint has timeAdded %v, want now", taint.TimeAdded)
		}
	}
}

func TestUnknownConditions(t *testing.T) {
	ready := node(corev1.ConditionTrue)
	conds, changed := unknownConditions(ready.Status.Conditions, now)
	if !changed {
		t.Fatal("a Ready node's conditions did not change")
	}
	for _, typ := range kubeletConditions {
		c := condition(conds, typ)
		if c == nil || c.Status != corev1.ConditionUnknown {
			t.Fatalf("%s = %+v, want Unknown", typ, c)
		}
	}
	if c := condition(conds, corev1.NodeReady); c.Reason != "NodeStatusUnknown" || c.Message != "Kubelet stopped posting node status." ||
		!c.LastTransitionTime.Equal(&now) || !c.LastHeartbeatTime.Equal(&earlier) {
		t.Errorf("Ready = %+v: want Kubernetes' reason and message, transition now, the kubelet's last heartbeat kept", c)
	}
	if c := condition(conds, corev1.NodeMemoryPressure); c.Reason != "NodeStatusNeverUpdated" {
		t.Errorf("a condition never reported = %+v, want NodeStatusNeverUpdated", c)
	}
	if ready.Status.Conditions[0].Status != corev1.ConditionTrue {
		t.Error("the node's own conditions were changed in place")
	}
	if _, again := unknownConditions(conds, now); again {
		t.Error("conditions already Unknown changed again: the controller would write every pass")
	}
}

func TestHealth(t *testing.T) {
	const grace, startup = 50 * time.Second, time.Minute
	lease := func(at time.Time) *coordinationv1.Lease {
		renew := metav1.NewMicroTime(at)
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: &renew}}
	}
	t.Run("a kubelet that keeps renewing its Lease is never silent, even with a stale status", func(t *testing.T) {
		h, n := &health{}, node(corev1.ConditionTrue)
		for s := 0; s <= 120; s += 10 {
			at := t0.Add(time.Duration(s) * time.Second)
			h.observe(n, lease(at), at)
			if h.silent(n, at, grace, startup) {
				t.Fatalf("silent at +%ds", s)
			}
		}
	})
	t.Run("a kubelet whose heartbeats stop is silent once the grace period has passed, by the controller's clock", func(t *testing.T) {
		h, n := &health{}, node(corev1.ConditionTrue)
		h.observe(n, lease(t0.Add(-time.Hour)), t0) // its clock is an hour behind: irrelevant
		if h.silent(n, t0.Add(grace), grace, startup) {
			t.Error("silent at exactly the grace period")
		}
		h.observe(n, lease(t0.Add(-time.Hour)), t0.Add(grace+time.Second))
		if !h.silent(n, t0.Add(grace+time.Second), grace, startup) {
			t.Error("not silent after the grace period")
		}
	})
	t.Run("a node that never reported Ready gets the longer startup grace period", func(t *testing.T) {
		h, n := &health{}, node("")
		h.observe(n, nil, t0)
		if h.silent(n, t0.Add(grace+time.Second), grace, startup) {
			t.Error("a starting node was judged with the monitor grace period")
		}
		if !h.silent(n, t0.Add(startup+time.Second), grace, startup) {
			t.Error("a node that never reported is not silent after the startup grace period")
		}
	})
}
