package podautoscaler

import (
	"context"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
)

// reconcileAutoscaler is one sync of one autoscaler (upstream's
// reconcileAutoscaler in horizontal.go): read the target's scale, let the
// metrics propose a count, bound it (stabilization, rate, min and max),
// write the new scale if it differs, and the status either way.
func (c *Controller) reconcileAutoscaler(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, key string) error {
	original := hpa.Status.DeepCopy()
	ref := hpa.Spec.ScaleTargetRef
	reference := fmt.Sprintf("%s/%s/%s", ref.Kind, hpa.Namespace, ref.Name)

	scale, err := c.scales.get(ctx, hpa.Namespace, ref)
	if err != nil {
		c.rec.Event(hpa, corev1.EventTypeWarning, ReasonFailedGetScale, "%s", err.Error())
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedGetScale", "the HPA controller was unable to get the target's current scale: %v", err)
		c.updateStatusIfNeeded(ctx, original, hpa)
		return fmt.Errorf("failed to query scale subresource for %s: %v", reference, err)
	}
	c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale")
	current := scale.Spec.Replicas
	c.history.recordInitialRecommendation(key, current)

	minReplicas := int32(1)
	if hpa.Spec.MinReplicas != nil {
		minReplicas = *hpa.Spec.MinReplicas
	}
	var (
		statuses      []autoscalingv2.MetricStatus
		desired       int32
		rescaleReason string
		rescale       = true
		retErr        error
	)
	switch {
	case current == 0 && minReplicas != 0:
		// A target scaled to zero by hand is left alone.
		rescale = false
		c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "ScalingDisabled", "scaling is disabled since the replica count of the target is zero")
		c.log.Info("target scaled to zero: autoscaling disabled", "hpa", key, "target", reference)
	case current > hpa.Spec.MaxReplicas:
		rescaleReason, desired = "Current number of replicas above Spec.MaxReplicas", hpa.Spec.MaxReplicas
	case current < minReplicas:
		rescaleReason, desired = "Current number of replicas below Spec.MinReplicas", minReplicas
	default:
		proposed, metricName, metricStatuses, err := c.computeReplicasForMetrics(ctx, hpa, key, scale.Spec.Replicas, scale.Status.Replicas, scale.Status.Selector)
		statuses = metricStatuses
		if err != nil && proposed == -1 {
			setCurrentReplicasAndMetrics(hpa, current, statuses)
			c.updateStatusIfNeeded(ctx, original, hpa)
			c.rec.Event(hpa, corev1.EventTypeWarning, ReasonFailedComputeMetricsReplicas, "%s", err.Error())
			return fmt.Errorf("failed to compute desired number of replicas based on listed metrics for %s: %v", reference, err)
		}
		// Some metrics failed, others proposed a count: scale on those,
		// and report the failure.
		retErr = err
		desired = proposed
		switch {
		case desired > current:
			rescaleReason = fmt.Sprintf("%s above target", metricName)
		case desired < current:
			rescaleReason = "All metrics below target"
		}
		if hpa.Spec.Behavior == nil {
			desired = c.normalizeDesiredReplicas(hpa, key, current, desired, minReplicas)
		} else {
			desired = c.normalizeDesiredReplicasWithBehaviors(hpa, key, current, desired, minReplicas)
		}
		rescale = desired != current
	}

	if rescale {
		scale.Spec.Replicas = desired
		if err := c.scales.update(ctx, hpa.Namespace, ref, scale); err != nil {
			c.rec.Event(hpa, corev1.EventTypeWarning, ReasonFailedRescale, "New size: %d; reason: %s; error: %v", desired, rescaleReason, err.Error())
			c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedUpdateScale", "the HPA controller was unable to update the target scale: %v", err)
			setCurrentReplicasAndMetrics(hpa, current, statuses)
			c.updateStatusIfNeeded(ctx, original, hpa)
			return fmt.Errorf("failed to rescale %s: %v", reference, err)
		}
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededRescale", "the HPA controller was able to update the target scale to %d", desired)
		c.rec.Event(hpa, corev1.EventTypeNormal, ReasonSuccessfulRescale, "New size: %d; reason: %s", desired, rescaleReason)
		c.history.storeScaleEvent(c.history.withDefaults(hpa.Spec.Behavior), key, current, desired)
		c.log.Info("rescaled", "hpa", key, "target", reference, "from", current, "to", desired, "reason", rescaleReason)
	} else {
		c.log.Info("no rescale", "hpa", key, "target", reference, "replicas", current)
		desired = current
	}
	c.setStatus(hpa, current, desired, statuses, rescale)
	c.updateStatusIfNeeded(ctx, original, hpa)
	return retErr
}

// updateStatusIfNeeded writes hpa's status if it changed; a failure is
// an event and a log line, and the next sync writes it again.
func (c *Controller) updateStatusIfNeeded(ctx context.Context, original *autoscalingv2.HorizontalPodAutoscalerStatus, hpa *autoscalingv2.HorizontalPodAutoscaler) {
	if !statusChanged(original, &hpa.Status) {
		return
	}
	if err := c.client.UpdateStatus(ctx, HorizontalPodAutoscalers, hpa.Namespace, hpa.Name, hpa, nil); err != nil {
		c.rec.Event(hpa, corev1.EventTypeWarning, ReasonFailedUpdateStatus, "%s", err.Error())
		c.log.Warn("failed to update status", "hpa", hpa.Namespace+"/"+hpa.Name, "err", err)
	}
}
