package podautoscaler

import (
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// setCondition sets a condition of hpa's status (upstream's
// setConditionInList): its lastTransitionTime moves only when its status
// changes; its reason and message are always the latest.
func (c *Controller) setCondition(hpa *autoscalingv2.HorizontalPodAutoscaler, typ autoscalingv2.HorizontalPodAutoscalerConditionType,
	status corev1.ConditionStatus, reason, messageFmt string, args ...any) {
	conds := hpa.Status.Conditions
	i := 0
	for i < len(conds) && conds[i].Type != typ {
		i++
	}
	if i == len(conds) {
		conds = append(conds, autoscalingv2.HorizontalPodAutoscalerCondition{Type: typ})
	}
	if conds[i].Status != status {
		conds[i].LastTransitionTime = metav1.NewTime(c.clock.Now())
	}
	conds[i].Status, conds[i].Reason, conds[i].Message = status, reason, fmt.Sprintf(messageFmt, args...)
	hpa.Status.Conditions = conds
}

// setCurrentReplicasAndMetrics records what was observed, whatever
// happens next.
func setCurrentReplicasAndMetrics(hpa *autoscalingv2.HorizontalPodAutoscaler, currentReplicas int32, statuses []autoscalingv2.MetricStatus) {
	hpa.Status.CurrentReplicas = currentReplicas
	hpa.Status.CurrentMetrics = statuses
}

// setStatus records the outcome of a sync; lastScaleTime moves only on a
// rescale.
func (c *Controller) setStatus(hpa *autoscalingv2.HorizontalPodAutoscaler, currentReplicas, desiredReplicas int32, statuses []autoscalingv2.MetricStatus, rescaled bool) {
	setCurrentReplicasAndMetrics(hpa, currentReplicas, statuses)
	hpa.Status.DesiredReplicas = desiredReplicas
	if rescaled {
		now := metav1.NewTime(c.clock.Now())
		hpa.Status.LastScaleTime = &now
	}
}

// statusChanged: an unchanged status is not written (each write would
// wake every watcher of autoscalers for nothing).
func statusChanged(before, after *autoscalingv2.HorizontalPodAutoscalerStatus) bool {
	return !equality.Semantic.DeepEqual(before, after)
}
