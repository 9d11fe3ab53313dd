package podautoscaler

import (
	"math"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
)

// normalizeDesiredReplicas bounds what the metrics propose, for an
// autoscaler without a behavior (upstream's normalizeDesiredReplicas):
// stabilized over the downscale window, then held within min and max
// and the scale-up rate; AbleToScale and ScalingLimited say which.
func (c *Controller) normalizeDesiredReplicas(hpa *autoscalingv2.HorizontalPodAutoscaler, key string, current, proposed, minReplicas int32) int32 {
	stabilized := c.history.stabilize(key, proposed)
	if stabilized != proposed {
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation")
	} else {
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ReadyForNewScale", "recommended size matches current size")
	}
	desired, reason, message := convertDesiredReplicasWithRules(current, stabilized, minReplicas, hpa.Spec.MaxReplicas)
	c.setCondition(hpa, autoscalingv2.ScalingLimited, limitedStatus(stabilized, desired), reason, "%s", message)
	c.log.Info("desired replicas normalized", "hpa", key, "proposed", proposed, "stabilized", stabilized,
		"downscaleStabilizationWindow", c.history.downscaleStabilisationWindow, "desired", desired, "limit", reason)
	return desired
}

// convertDesiredReplicasWithRules holds desired within min (at least 1),
// max, and max(2 × current, 4): the count and the ScalingLimited reason
// and message.
func convertDesiredReplicasWithRules(current, desired, minReplicas, maxReplicas int32) (int32, string, string) {
	minimumAllowed := max(minReplicas, 1) // scaling to zero is not enabled
	scaleUpLimit := int32(math.Max(scaleUpLimitFactor*float64(current), scaleUpLimitMinimum))
	maximumAllowed, limitReason, limitMessage := maxReplicas, "TooManyReplicas", "the desired replica count is more than the maximum replica count"
	if maxReplicas > scaleUpLimit {
		maximumAllowed, limitReason, limitMessage = scaleUpLimit, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
	}
	switch {
	case desired < minimumAllowed:
		return minimumAllowed, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
	case desired > maximumAllowed:
		return maximumAllowed, limitReason, limitMessage
	}
	return desired, "DesiredWithinRange", "the desired count is within the acceptable range"
}

// normalizeDesiredReplicasWithBehaviors is the same for an autoscaler
// with a behavior: its stabilization windows, then its policies' rates
// and min and max.
func (c *Controller) normalizeDesiredReplicasWithBehaviors(hpa *autoscalingv2.HorizontalPodAutoscaler, key string, current, proposed, minReplicas int32) int32 {
	b := c.history.withDefaults(hpa.Spec.Behavior)
	stabilized, reason, message := c.history.stabilizeWithBehavior(key, current, proposed, b.ScaleUp, b.ScaleDown)
	if stabilized != proposed {
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, reason, "%s", message)
	} else {
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ReadyForNewScale", "recommended size matches current size")
	}
	desired, reason, message := c.convertDesiredReplicasWithBehaviorRate(key, current, stabilized, minReplicas, hpa.Spec.MaxReplicas, b)
	c.setCondition(hpa, autoscalingv2.ScalingLimited, limitedStatus(stabilized, desired), reason, "%s", message)
	c.log.Info("desired replicas normalized by the behavior", "hpa", key, "proposed", proposed, "stabilized", stabilized,
		"scaleUpWindowSeconds", *b.ScaleUp.StabilizationWindowSeconds, "scaleDownWindowSeconds", *b.ScaleDown.StabilizationWindowSeconds,
		"desired", desired, "limit", reason)
	return desired
}

// convertDesiredReplicasWithBehaviorRate holds desired within what the
// policies allow in its direction, and min and max.
func (c *Controller) convertDesiredReplicasWithBehaviorRate(key string, current, desired, minReplicas, maxReplicas int32, b *autoscalingv2.HorizontalPodAutoscalerBehavior) (int32, string, string) {
	switch {
	case desired > current:
		// A limit below current means recent rescales used the period up:
		// no further growth until they age out.
		limit := max(c.history.scaleUpLimit(key, current, b.ScaleUp), current)
		maximumAllowed, reason, message := maxReplicas, "TooManyReplicas", "the desired replica count is more than the maximum replica count"
		if maxReplicas > limit {
			maximumAllowed, reason, message = limit, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
		}
		if desired > maximumAllowed {
			return maximumAllowed, reason, message
		}
	case desired < current:
		limit := min(c.history.scaleDownLimit(key, current, b.ScaleDown), current)
		minimumAllowed, reason, message := minReplicas, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
		if minReplicas < limit {
			minimumAllowed, reason, message = limit, "ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate"
		}
		if desired < minimumAllowed {
			return minimumAllowed, reason, message
		}
	}
	return desired, "DesiredWithinRange", "the desired count is within the acceptable range"
}
