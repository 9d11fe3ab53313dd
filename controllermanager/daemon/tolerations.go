package daemon

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// defaultTolerations are the tolerations every daemon pod gets, whatever
// its template says (Kubernetes' AddOrUpdateDaemonPodTolerations): a
// daemon belongs to its node, so
//
//   - it is not evicted when the node becomes not-ready or unreachable
//     (the node lifecycle controller's NoExecute taints), and
//   - it still runs on a node under disk, memory or PID pressure, or
//     cordoned (`kubectl cordon`: unschedulable), as the node's agents
//     must (the NoSchedule taints of those conditions).
//
// A pod on the host's network also tolerates network-unavailable: it is
// often the network plugin itself.
var defaultTolerations = []corev1.Toleration{
	{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeDiskPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodePIDPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
}

var hostNetworkToleration = corev1.Toleration{Key: corev1.TaintNodeNetworkUnavailable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}

// daemonTolerations returns spec's tolerations with the defaults added;
// spec is not modified. A template toleration of the same key, operator,
// value and effect as a default is replaced by the default (which has no
// tolerationSeconds: a daemon tolerates those taints forever), as
// Kubernetes' AddOrUpdateTolerationInPodSpec does.
func daemonTolerations(spec *corev1.PodSpec) []corev1.Toleration {
	out := append([]corev1.Toleration(nil), spec.Tolerations...)
	defaults := defaultTolerations
	if spec.HostNetwork {
		defaults = append(append([]corev1.Toleration(nil), defaults...), hostNetworkToleration)
	}
	for _, d := range defaults {
		out = addOrUpdateToleration(out, d)
	}
	return out
}

func addOrUpdateToleration(tols []corev1.Toleration, t corev1.Toleration) []corev1.Toleration {
	for i := range tols {
		if tols[i].MatchToleration(&t) {
			if !equality.Semantic.DeepEqual(tols[i], t) {
				tols[i] = t
			}
			return tols
		}
	}
	return append(tols, t)
}
