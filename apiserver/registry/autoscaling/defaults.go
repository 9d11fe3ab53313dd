package autoscaling

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// defaultCPUUtilization is the target of an autoscaler that names no
// metric: 80% of the pods' CPU requests, on average (Kubernetes'
// DefaultCPUUtilization, shared by v2 defaulting and v1 conversion).
const defaultCPUUtilization = 80

// cpuUtilization is the metric "keep the pods' average CPU use at
// percent of their requests": what autoscaling/v1 can express.
func cpuUtilization(percent int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(percent)}}}
}

// The scaling rules that repeat the HPA's behaviour before behavior
// existed (Kubernetes' defaultHPAScaleUpRules and defaultHPAScaleDownRules):
// up by the larger of 4 pods or 100% every 15 seconds, with no
// stabilization; down by up to 100% every 15 seconds, after the
// controller's own --horizontal-pod-autoscaler-downscale-stabilization
// window (hence no stabilizationWindowSeconds here).
func defaultScaleUp() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](0), SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		}}
}

func defaultScaleDown() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}}
}

// defaultHPA is Kubernetes' SetDefaults_HorizontalPodAutoscaler (v2):
// minReplicas 1, the CPU target when no metric is named, and, when a
// behavior is given, its unset rules and fields from the defaults above.
func defaultHPA(hpa *autoscalingv2.HorizontalPodAutoscaler) {
	if hpa.Spec.MinReplicas == nil {
		hpa.Spec.MinReplicas = ptr.To[int32](1)
	}
	if len(hpa.Spec.Metrics) == 0 {
		hpa.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilization(defaultCPUUtilization)}
	}
	if b := hpa.Spec.Behavior; b != nil {
		b.ScaleUp = fillRules(b.ScaleUp, defaultScaleUp())
		b.ScaleDown = fillRules(b.ScaleDown, defaultScaleDown())
	}
}

// fillRules is copyHPAScalingRules: the set fields of from over to.
func fillRules(from, to *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if from == nil {
		return to
	}
	if from.SelectPolicy != nil {
		to.SelectPolicy = from.SelectPolicy
	}
	if from.StabilizationWindowSeconds != nil {
		to.StabilizationWindowSeconds = from.StabilizationWindowSeconds
	}
	if from.Policies != nil {
		to.Policies = from.Policies
	}
	if from.Tolerance != nil {
		to.Tolerance = from.Tolerance
	}
	return to
}
