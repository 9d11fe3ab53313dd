package autoscaling

import (
	"encoding/json"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func podsMetric(name, avg string) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: name},
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse(avg))}}}
}

func externalMetric() autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "queue_depth", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"queue": "jobs"}}},
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("30"))}}}
}

func asJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// Every v2 autoscaler survives v2 -> v1 -> v2: what v1 cannot hold
// travels in its annotations.
func TestV2SurvivesARoundTripThroughV1(t *testing.T) {
	seen := metav1.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	full := webHPA()
	full.Annotations = map[string]string{"team": "web"}
	full.Spec.Metrics = []autoscalingv2.MetricSpec{podsMetric("queue", "10"), objectMetric(), externalMetric(),
		{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{Name: corev1.ResourceMemory,
			Container: "app", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("256Mi"))}}},
		cpuUtilization(50)}
	full.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{Tolerance: ptr.To(resource.MustParse("50m"))}}
	defaultHPA(full)
	full.Status = autoscalingv2.HorizontalPodAutoscalerStatus{ObservedGeneration: ptr.To[int64](2), LastScaleTime: &seen, CurrentReplicas: 3, DesiredReplicas: 4,
		CurrentMetrics: []autoscalingv2.MetricStatus{
			{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricStatus{Metric: autoscalingv2.MetricIdentifier{Name: "queue"},
				Current: autoscalingv2.MetricValueStatus{AverageValue: ptr.To(resource.MustParse("12"))}}},
			{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU,
				Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](61), AverageValue: ptr.To(resource.MustParse("122m"))}}},
		},
		Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionFalse,
			LastTransitionTime: seen, Reason: "FailedGetResourceMetric", Message: "the HPA was unable to compute the replica count"}},
	}

	for _, tc := range []struct {
		name string
		hpa  *autoscalingv2.HorizontalPodAutoscaler
	}{
		{name: "a CPU target alone", hpa: webHPA()},
		{name: "every kind of metric, a behavior and a status", hpa: full},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v1 := toV1(tc.hpa)
			back := fromV1(v1)
			if !equality.Semantic.DeepEqual(tc.hpa, back) {
				t.Errorf("round trip changed it:\n%s\nbecame\n%s\nvia %s", asJSON(tc.hpa), asJSON(back), asJSON(v1))
			}
		})
	}

	v1 := toV1(full)
	if p := v1.Spec.TargetCPUUtilizationPercentage; p == nil || *p != 50 {
		t.Errorf("targetCPUUtilizationPercentage %v, want 50", p)
	}
	if p := v1.Status.CurrentCPUUtilizationPercentage; p == nil || *p != 61 {
		t.Errorf("currentCPUUtilizationPercentage %v, want 61", p)
	}
	if v1.Annotations["team"] != "web" {
		t.Errorf("the user's annotation is lost: %v", v1.Annotations)
	}
	// Kubernetes' own spellings, which a Kubernetes client must read.
	for key, want := range map[string]string{
		metricSpecsAnnotation: `[{"type":"Pods","pods":{"metricName":"queue","targetAverageValue":"10"}},` +
			`{"type":"Object","object":{"target":{"kind":"Service","name":"web","apiVersion":"v1"},"metricName":"requests-per-second","targetValue":"100"}},` +
			`{"type":"External","external":{"metricName":"queue_depth","metricSelector":{"matchLabels":{"queue":"jobs"}},"targetAverageValue":"30"}},` +
			`{"type":"ContainerResource","containerResource":{"name":"memory","targetAverageValue":"256Mi","container":"app"}}]`,
		behaviorAnnotation: `{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},` +
			`{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null},` +
			`"ScaleDown":{"StabilizationWindowSeconds":null,"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":"50m"}}`,
		conditionsAnnotation: `[{"type":"ScalingActive","status":"False","lastTransitionTime":"2026-11-30T12:00:00Z","reason":"FailedGetResourceMetric",` +
			`"message":"the HPA was unable to compute the replica count"}]`,
	} {
		if got := v1.Annotations[key]; got != want {
			t.Errorf("%s:\n got %s\nwant %s", key, got, want)
		}
	}
}

func TestV1ConvertsToV2(t *testing.T) {
	ref := autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	for _, tc := range []struct {
		name string
		in   autoscalingv1.HorizontalPodAutoscaler
		want []autoscalingv2.MetricSpec
	}{
		{name: "targetCPUUtilizationPercentage is a CPU utilization metric",
			in:   autoscalingv1.HorizontalPodAutoscaler{Spec: autoscalingv1.HorizontalPodAutoscalerSpec{ScaleTargetRef: ref, MaxReplicas: 5, TargetCPUUtilizationPercentage: ptr.To[int32](50)}},
			want: []autoscalingv2.MetricSpec{cpuUtilization(50)}},
		{name: "no target at all is v1's implicit 80% CPU",
			in:   autoscalingv1.HorizontalPodAutoscaler{Spec: autoscalingv1.HorizontalPodAutoscalerSpec{ScaleTargetRef: ref, MaxReplicas: 5}},
			want: []autoscalingv2.MetricSpec{cpuUtilization(80)}},
		{name: "the metrics annotation comes first, the CPU target last",
			in: autoscalingv1.HorizontalPodAutoscaler{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{metricSpecsAnnotation: `[{"type":"Pods","pods":{"metricName":"queue","targetAverageValue":"10"}}]`}},
				Spec:       autoscalingv1.HorizontalPodAutoscalerSpec{ScaleTargetRef: ref, MaxReplicas: 5, TargetCPUUtilizationPercentage: ptr.To[int32](50)}},
			want: []autoscalingv2.MetricSpec{podsMetric("queue", "10"), cpuUtilization(50)}},
		{name: "a malformed annotation is ignored",
			in: autoscalingv1.HorizontalPodAutoscaler{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{metricSpecsAnnotation: `[{`}},
				Spec:       autoscalingv1.HorizontalPodAutoscalerSpec{ScaleTargetRef: ref, MaxReplicas: 5}},
			want: []autoscalingv2.MetricSpec{cpuUtilization(80)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fromV1(&tc.in)
			if !equality.Semantic.DeepEqual(got.Spec.Metrics, tc.want) {
				t.Errorf("metrics %s, want %s", asJSON(got.Spec.Metrics), asJSON(tc.want))
			}
			if len(got.Annotations) != 0 {
				t.Errorf("the conversion's annotations are stored: %v", got.Annotations)
			}
		})
	}
}
