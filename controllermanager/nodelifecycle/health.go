package nodelifecycle

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubeletConditions are the conditions a kubelet reports and keeps fresh:
// when it goes silent, nobody vouches for any of them, so all become
// Unknown (Kubernetes' nodeConditionTypes).
var kubeletConditions = []corev1.NodeConditionType{
	corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure,
}

// health is what the controller remembers of one node between passes.
// Kubernetes times a node's silence with its own clock, from when it last
// saw a heartbeat change, never with the kubelet's timestamps: the two
// machines' clocks may disagree.
type health struct {
	probe     time.Time // when a heartbeat last changed, by our clock
	heartbeat metav1.Time
	renew     metav1.MicroTime // the Lease's renewTime last seen
}

// observe updates h with the node's and its Lease's heartbeats: either
// moving counts as the kubelet being alive now (seed 000 section 一: the
// kubelet reports to the API server; KEP-589: the Lease is the cheap
// heartbeat).
func (h *health) observe(node *corev1.Node, lease *coordinationv1.Lease, now time.Time) {
	if h.probe.IsZero() {
		h.probe = now // first sight: the grace period starts now
	}
	if ready := condition(node.Status.Conditions, corev1.NodeReady); ready != nil && !ready.LastHeartbeatTime.Equal(&h.heartbeat) {
		h.heartbeat, h.probe = ready.LastHeartbeatTime, now
	}
	if lease != nil && lease.Spec.RenewTime != nil && h.renew.Before(lease.Spec.RenewTime) { // newer, as Kubernetes requires
		h.renew, h.probe = *lease.Spec.RenewTime, now
	}
}

// silent says whether the kubelet has been quiet longer than it may be: the
// startup grace period for a node that never reported Ready, else the
// monitor grace period.
func (h *health) silent(node *corev1.Node, now time.Time, monitorGrace, startupGrace time.Duration) bool {
	grace := monitorGrace
	if condition(node.Status.Conditions, corev1.NodeReady) == nil {
		grace = startupGrace
	}
	return now.After(h.probe.Add(grace))
}

// unknownConditions returns the node's conditions with every kubelet
// condition set to Unknown, in Kubernetes' words, and whether anything
// changed. A condition that was never reported is added as such.
func unknownConditions(conds []corev1.NodeCondition, now metav1.Time) ([]corev1.NodeCondition, bool) {
	out := append([]corev1.NodeCondition(nil), conds...)
	changed := false
	for _, typ := range kubeletConditions {
		c := condition(out, typ)
		switch {
		case c == nil:
			out = append(out, corev1.NodeCondition{Type: typ, Status: corev1.ConditionUnknown,
				Reason: "NodeStatusNeverUpdated", Message: "Kubelet never posted node status.",
				LastHeartbeatTime: now, LastTransitionTime: now})
			changed = true
		case c.Status != corev1.ConditionUnknown:
			c.Status, c.Reason, c.Message, c.LastTransitionTime = corev1.ConditionUnknown,
				"NodeStatusUnknown", "Kubelet stopped posting node status.", now
			changed = true
		}
	}
	return out, changed
}

// condition finds a condition by type; the pointer is into conds.
func condition(conds []corev1.NodeCondition, typ corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}
