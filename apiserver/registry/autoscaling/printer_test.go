package autoscaling

import (
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

func TestFormatMetrics(t *testing.T) {
	cpuNow := autoscalingv2.MetricStatus{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
		Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](12)}}}
	for _, tc := range []struct {
		name     string
		specs    []autoscalingv2.MetricSpec
		statuses []autoscalingv2.MetricStatus
		want     string
	}{
		{name: "no metrics", want: "<none>"},
		{name: "a CPU target not measured yet", specs: []autoscalingv2.MetricSpec{cpuUtilization(80)}, want: "cpu: <unknown>/80%"},
		{name: "a measured CPU target", specs: []autoscalingv2.MetricSpec{cpuUtilization(50)}, statuses: []autoscalingv2.MetricStatus{cpuNow}, want: "cpu: 12%/50%"},
		{name: "an object's value and an external average", specs: []autoscalingv2.MetricSpec{objectMetric(), externalMetric()},
			want: "<unknown>/100, <unknown>/30 (avg)"},
		{name: "a raw resource value", specs: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("1Gi"))}}}},
			want: "memory: <unknown>/1Gi"},
		{name: "more than two metrics are counted", specs: []autoscalingv2.MetricSpec{podsMetric("a", "1"), podsMetric("b", "2"), podsMetric("c", "3"), cpuUtilization(80)},
			want: "<unknown>/1, <unknown>/2 + 2 more..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := formatMetrics(tc.specs, tc.statuses); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTheRowIsKubectlGetHPAs(t *testing.T) {
	hpa := webHPA()
	row := hpaRow(hpa, hpa.CreationTimestamp.Time)
	want := []any{"Deployment/web", "cpu: <unknown>/50%", "1", int64(5), int64(0)}
	for i, w := range want {
		if row[i] != w {
			t.Errorf("cell %d: %v, want %v", i, row[i], w)
		}
	}
}
