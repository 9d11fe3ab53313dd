package autoscaling

import (
	"encoding/json"
	"maps"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// autoscaling/v1 knows one target, a CPU utilization; Kubernetes keeps
// what v2 says beyond it in annotations of the v1 object, so that a v1
// client that reads, changes and writes an autoscaler loses nothing
// (pkg/apis/autoscaling/v1/conversion.go). They exist only in the v1
// view: the stored (v2) object never has them.
const (
	metricSpecsAnnotation    = "autoscaling.alpha.kubernetes.io/metrics"         // the metrics other than CPU utilization
	metricStatusesAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics" // every current metric
	conditionsAnnotation     = "autoscaling.alpha.kubernetes.io/conditions"
	behaviorAnnotation       = "autoscaling.alpha.kubernetes.io/behavior"
	// Written by older releases for v2beta2's tolerances; only dropped.
	scaleDownToleranceAnnotation = "autoscaling.alpha.kubernetes.io/scale-down-tolerance"
	scaleUpToleranceAnnotation   = "autoscaling.alpha.kubernetes.io/scale-up-tolerance"
)

var roundTripAnnotations = []string{metricSpecsAnnotation, metricStatusesAnnotation, conditionsAnnotation,
	behaviorAnnotation, scaleDownToleranceAnnotation, scaleUpToleranceAnnotation}

// withoutRoundTripAnnotations is a copy of the annotations without those
// the conversion writes (nil stays nil).
func withoutRoundTripAnnotations(in map[string]string) map[string]string {
	if in == nil {
		return nil
	}
	out := maps.Clone(in)
	for _, k := range roundTripAnnotations {
		delete(out, k)
	}
	return out
}

// isCPUUtilization: the one kind of metric v1's spec can hold.
func isCPUUtilization(m autoscalingv2.MetricSpec) bool {
	return m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU &&
		m.Resource.Target.AverageUtilization != nil
}

// toV1 is the v1 view of a stored autoscaler: the (first) CPU
// utilization target as targetCPUUtilizationPercentage, the rest in the
// annotations.
func toV1(in *autoscalingv2.HorizontalPodAutoscaler) *autoscalingv1.HorizontalPodAutoscaler {
	out := &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: *in.ObjectMeta.DeepCopy()}
	out.Annotations = withoutRoundTripAnnotations(out.Annotations)
	ref := in.Spec.ScaleTargetRef
	out.Spec = autoscalingv1.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: ref.Kind, Name: ref.Name, APIVersion: ref.APIVersion},
		MinReplicas:    in.Spec.MinReplicas, MaxReplicas: in.Spec.MaxReplicas,
	}
	var others []autoscalingv1.MetricSpec
	for _, m := range in.Spec.Metrics {
		if isCPUUtilization(m) {
			if out.Spec.TargetCPUUtilizationPercentage == nil {
				out.Spec.TargetCPUUtilizationPercentage = ptr.To(*m.Resource.Target.AverageUtilization)
			}
			continue
		}
		others = append(others, metricSpecToV1(m))
	}

	st := in.Status
	out.Status = autoscalingv1.HorizontalPodAutoscalerStatus{ObservedGeneration: st.ObservedGeneration, LastScaleTime: st.LastScaleTime,
		CurrentReplicas: st.CurrentReplicas, DesiredReplicas: st.DesiredReplicas}
	current := make([]autoscalingv1.MetricStatus, len(st.CurrentMetrics))
	for i, m := range st.CurrentMetrics {
		current[i] = metricStatusToV1(m)
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU &&
			m.Resource.Current.AverageUtilization != nil {
			out.Status.CurrentCPUUtilizationPercentage = ptr.To(*m.Resource.Current.AverageUtilization)
		}
	}
	conditions := make([]autoscalingv1.HorizontalPodAutoscalerCondition, len(st.Conditions))
	for i, c := range st.Conditions {
		conditions[i] = autoscalingv1.HorizontalPodAutoscalerCondition{Type: autoscalingv1.HorizontalPodAutoscalerConditionType(c.Type),
			Status: c.Status, LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message, ObservedGeneration: c.ObservedGeneration}
	}

	annotate := func(key string, v any) {
		data, err := json.Marshal(v)
		if err != nil {
			return // these types always marshal
		}
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[key] = string(data)
	}
	if len(others) > 0 {
		annotate(metricSpecsAnnotation, others)
	}
	if len(st.CurrentMetrics) > 0 {
		annotate(metricStatusesAnnotation, current)
	}
	if in.Spec.Behavior != nil {
		annotate(behaviorAnnotation, behaviorToAnnotation(in.Spec.Behavior))
	}
	if len(st.Conditions) > 0 {
		annotate(conditionsAnnotation, conditions)
	}
	return out
}

// fromV1 is the stored (v2) autoscaler of a v1 one: its CPU target as a
// metric, the annotations read back into metrics, behavior and status,
// and the CPU default when it names no target at all (v1's implicit
// 80%, which Kubernetes makes explicit here).
func fromV1(in *autoscalingv1.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	out := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: *in.ObjectMeta.DeepCopy()}
	ref := in.Spec.ScaleTargetRef
	out.Spec = autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: ref.Kind, Name: ref.Name, APIVersion: ref.APIVersion},
		MinReplicas:    in.Spec.MinReplicas, MaxReplicas: in.Spec.MaxReplicas,
	}
	if p := in.Spec.TargetCPUUtilizationPercentage; p != nil {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilization(*p)}
	}
	st := in.Status
	out.Status = autoscalingv2.HorizontalPodAutoscalerStatus{ObservedGeneration: st.ObservedGeneration, LastScaleTime: st.LastScaleTime,
		CurrentReplicas: st.CurrentReplicas, DesiredReplicas: st.DesiredReplicas}
	if p := st.CurrentCPUUtilizationPercentage; p != nil {
		out.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To(*p)}}}}
	}

	// A malformed annotation is ignored, as in Kubernetes.
	ann := in.Annotations
	var others []autoscalingv1.MetricSpec
	if data, ok := ann[metricSpecsAnnotation]; ok && json.Unmarshal([]byte(data), &others) == nil {
		metrics := make([]autoscalingv2.MetricSpec, 0, len(others)+1)
		for _, m := range others {
			metrics = append(metrics, metricSpecFromV1(m))
		}
		out.Spec.Metrics = append(metrics, out.Spec.Metrics...) // the CPU target, if any, comes last
	}
	var b behaviorJSON
	if data, ok := ann[behaviorAnnotation]; ok && json.Unmarshal([]byte(data), &b) == nil && (b.ScaleUp != nil || b.ScaleDown != nil) {
		out.Spec.Behavior = b.behavior()
	}
	var current []autoscalingv1.MetricStatus
	if data, ok := ann[metricStatusesAnnotation]; ok && json.Unmarshal([]byte(data), &current) == nil {
		// They say more than currentCPUUtilizationPercentage.
		out.Status.CurrentMetrics = make([]autoscalingv2.MetricStatus, len(current))
		for i, m := range current {
			out.Status.CurrentMetrics[i] = metricStatusFromV1(m)
		}
	}
	if len(out.Spec.Metrics) == 0 {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilization(defaultCPUUtilization)}
	}
	var conditions []autoscalingv1.HorizontalPodAutoscalerCondition
	if data, ok := ann[conditionsAnnotation]; ok && json.Unmarshal([]byte(data), &conditions) == nil {
		out.Status.Conditions = make([]autoscalingv2.HorizontalPodAutoscalerCondition, len(conditions))
		for i, c := range conditions {
			out.Status.Conditions[i] = autoscalingv2.HorizontalPodAutoscalerCondition{Type: autoscalingv2.HorizontalPodAutoscalerConditionType(c.Type),
				Status: c.Status, LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message, ObservedGeneration: c.ObservedGeneration}
		}
	}
	out.Annotations = withoutRoundTripAnnotations(out.Annotations)
	return out
}

// behaviorJSON has the shape of Kubernetes' internal
// HorizontalPodAutoscalerBehavior, whose fields have no json tags: the
// behavior annotation spells them as Go does ("ScaleUp", "Policies"),
// and so must mkube for a Kubernetes client to read it.
type behaviorJSON struct {
	ScaleUp, ScaleDown *rulesJSON
}

type rulesJSON struct {
	StabilizationWindowSeconds *int32
	SelectPolicy               *autoscalingv2.ScalingPolicySelect
	Policies                   []policyJSON
	Tolerance                  *resource.Quantity
}

type policyJSON struct {
	Type          autoscalingv2.HPAScalingPolicyType
	Value         int32
	PeriodSeconds int32
}

func behaviorToAnnotation(b *autoscalingv2.HorizontalPodAutoscalerBehavior) behaviorJSON {
	rules := func(r *autoscalingv2.HPAScalingRules) *rulesJSON {
		if r == nil {
			return nil
		}
		out := &rulesJSON{StabilizationWindowSeconds: r.StabilizationWindowSeconds, SelectPolicy: r.SelectPolicy, Tolerance: r.Tolerance}
		for _, p := range r.Policies {
			out.Policies = append(out.Policies, policyJSON(p))
		}
		return out
	}
	return behaviorJSON{ScaleUp: rules(b.ScaleUp), ScaleDown: rules(b.ScaleDown)}
}

func (b behaviorJSON) behavior() *autoscalingv2.HorizontalPodAutoscalerBehavior {
	rules := func(r *rulesJSON) *autoscalingv2.HPAScalingRules {
		if r == nil {
			return nil
		}
		out := &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: r.StabilizationWindowSeconds, SelectPolicy: r.SelectPolicy, Tolerance: r.Tolerance}
		for _, p := range r.Policies {
			out.Policies = append(out.Policies, autoscalingv2.HPAScalingPolicy(p))
		}
		return out
	}
	return &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rules(b.ScaleUp), ScaleDown: rules(b.ScaleDown)}
}

// metricSpecToV1 is a metric in v1's older words: metricName and
// targetValue for v2's metric.name and target.value.
func metricSpecToV1(m autoscalingv2.MetricSpec) autoscalingv1.MetricSpec {
	out := autoscalingv1.MetricSpec{Type: autoscalingv1.MetricSourceType(m.Type)}
	if s := m.Object; s != nil {
		out.Object = &autoscalingv1.ObjectMetricSource{Target: refToV1(s.DescribedObject), MetricName: s.Metric.Name,
			Selector: s.Metric.Selector, AverageValue: s.Target.AverageValue}
		if s.Target.Value != nil {
			out.Object.TargetValue = *s.Target.Value
		}
	}
	if s := m.Pods; s != nil {
		out.Pods = &autoscalingv1.PodsMetricSource{MetricName: s.Metric.Name, Selector: s.Metric.Selector}
		if s.Target.AverageValue != nil {
			out.Pods.TargetAverageValue = *s.Target.AverageValue
		}
	}
	if s := m.Resource; s != nil {
		out.Resource = &autoscalingv1.ResourceMetricSource{Name: s.Name,
			TargetAverageUtilization: s.Target.AverageUtilization, TargetAverageValue: s.Target.AverageValue}
	}
	if s := m.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricSource{Name: s.Name, Container: s.Container,
			TargetAverageUtilization: s.Target.AverageUtilization, TargetAverageValue: s.Target.AverageValue}
	}
	if s := m.External; s != nil {
		out.External = &autoscalingv1.ExternalMetricSource{MetricName: s.Metric.Name, MetricSelector: s.Metric.Selector,
			TargetValue: s.Target.Value, TargetAverageValue: s.Target.AverageValue}
	}
	return out
}

// metricSpecFromV1 infers v2's target type from which v1 fields are set.
func metricSpecFromV1(m autoscalingv1.MetricSpec) autoscalingv2.MetricSpec {
	out := autoscalingv2.MetricSpec{Type: autoscalingv2.MetricSourceType(m.Type)}
	if s := m.Object; s != nil {
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(s.TargetValue), AverageValue: s.AverageValue}
		if s.AverageValue != nil {
			// v1 cannot omit targetValue; a zero one is no target.
			t.Type, t.Value = autoscalingv2.AverageValueMetricType, nil
			if !s.TargetValue.IsZero() {
				t.Value = ptr.To(s.TargetValue)
			}
		}
		out.Object = &autoscalingv2.ObjectMetricSource{DescribedObject: refFromV1(s.Target),
			Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector}, Target: t}
	}
	if s := m.Pods; s != nil {
		out.Pods = &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(s.TargetAverageValue)}}
	}
	if s := m.Resource; s != nil {
		out.Resource = &autoscalingv2.ResourceMetricSource{Name: s.Name, Target: utilizationTarget(s.TargetAverageUtilization, s.TargetAverageValue)}
	}
	if s := m.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{Name: s.Name, Container: s.Container,
			Target: utilizationTarget(s.TargetAverageUtilization, s.TargetAverageValue)}
	}
	if s := m.External; s != nil {
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: s.TargetValue, AverageValue: s.TargetAverageValue}
		if s.TargetValue == nil {
			t.Type = autoscalingv2.AverageValueMetricType
		}
		out.External = &autoscalingv2.ExternalMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.MetricSelector}, Target: t}
	}
	return out
}

func utilizationTarget(utilization *int32, value *resource.Quantity) autoscalingv2.MetricTarget {
	t := autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: utilization, AverageValue: value}
	if utilization == nil {
		t.Type = autoscalingv2.AverageValueMetricType
	}
	return t
}

func metricStatusToV1(m autoscalingv2.MetricStatus) autoscalingv1.MetricStatus {
	out := autoscalingv1.MetricStatus{Type: autoscalingv1.MetricSourceType(m.Type)}
	deref := func(q *resource.Quantity) resource.Quantity {
		if q == nil {
			return resource.Quantity{}
		}
		return *q
	}
	if s := m.Object; s != nil {
		out.Object = &autoscalingv1.ObjectMetricStatus{Target: refToV1(s.DescribedObject), MetricName: s.Metric.Name,
			CurrentValue: deref(s.Current.Value), Selector: s.Metric.Selector, AverageValue: s.Current.AverageValue}
	}
	if s := m.Pods; s != nil {
		out.Pods = &autoscalingv1.PodsMetricStatus{MetricName: s.Metric.Name, CurrentAverageValue: deref(s.Current.AverageValue), Selector: s.Metric.Selector}
	}
	if s := m.Resource; s != nil {
		out.Resource = &autoscalingv1.ResourceMetricStatus{Name: s.Name, CurrentAverageUtilization: s.Current.AverageUtilization,
			CurrentAverageValue: deref(s.Current.AverageValue)}
	}
	if s := m.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricStatus{Name: s.Name, Container: s.Container,
			CurrentAverageUtilization: s.Current.AverageUtilization, CurrentAverageValue: deref(s.Current.AverageValue)}
	}
	if s := m.External; s != nil {
		out.External = &autoscalingv1.ExternalMetricStatus{MetricName: s.Metric.Name, MetricSelector: s.Metric.Selector,
			CurrentValue: deref(s.Current.Value), CurrentAverageValue: s.Current.AverageValue}
	}
	return out
}

func metricStatusFromV1(m autoscalingv1.MetricStatus) autoscalingv2.MetricStatus {
	out := autoscalingv2.MetricStatus{Type: autoscalingv2.MetricSourceType(m.Type)}
	if s := m.Object; s != nil {
		out.Object = &autoscalingv2.ObjectMetricStatus{DescribedObject: refFromV1(s.Target),
			Metric:  autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Current: autoscalingv2.MetricValueStatus{Value: ptr.To(s.CurrentValue), AverageValue: s.AverageValue}}
	}
	if s := m.Pods; s != nil {
		out.Pods = &autoscalingv2.PodsMetricStatus{Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Current: autoscalingv2.MetricValueStatus{AverageValue: ptr.To(s.CurrentAverageValue)}}
	}
	if s := m.Resource; s != nil {
		out.Resource = &autoscalingv2.ResourceMetricStatus{Name: s.Name,
			Current: autoscalingv2.MetricValueStatus{AverageValue: ptr.To(s.CurrentAverageValue), AverageUtilization: s.CurrentAverageUtilization}}
	}
	if s := m.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricStatus{Name: s.Name, Container: s.Container,
			Current: autoscalingv2.MetricValueStatus{AverageValue: ptr.To(s.CurrentAverageValue), AverageUtilization: s.CurrentAverageUtilization}}
	}
	if s := m.External; s != nil {
		out.External = &autoscalingv2.ExternalMetricStatus{Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.MetricSelector},
			Current: autoscalingv2.MetricValueStatus{Value: ptr.To(s.CurrentValue), AverageValue: s.CurrentAverageValue}}
	}
	return out
}

func refToV1(r autoscalingv2.CrossVersionObjectReference) autoscalingv1.CrossVersionObjectReference {
	return autoscalingv1.CrossVersionObjectReference{Kind: r.Kind, Name: r.Name, APIVersion: r.APIVersion}
}

func refFromV1(r autoscalingv1.CrossVersionObjectReference) autoscalingv2.CrossVersionObjectReference {
	return autoscalingv2.CrossVersionObjectReference{Kind: r.Kind, Name: r.Name, APIVersion: r.APIVersion}
}
