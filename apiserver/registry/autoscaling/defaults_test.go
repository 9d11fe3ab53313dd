package autoscaling

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/utils/ptr"
)

func TestDefaultHPA(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in, want autoscalingv2.HorizontalPodAutoscalerSpec
	}{
		{name: "an autoscaler without metrics targets 80% CPU from one replica",
			in: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 3},
			want: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 3, MinReplicas: ptr.To[int32](1),
				Metrics: []autoscalingv2.MetricSpec{cpuUtilization(80)}}},
		{name: "given metrics and minReplicas are kept, and no behavior is added",
			in:   autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 3, MinReplicas: ptr.To[int32](2), Metrics: []autoscalingv2.MetricSpec{cpuUtilization(50)}},
			want: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 3, MinReplicas: ptr.To[int32](2), Metrics: []autoscalingv2.MetricSpec{cpuUtilization(50)}}},
		{name: "a behavior gets both rules, with the fields it sets kept",
			in: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 3, Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60)}}},
			want: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 3, MinReplicas: ptr.To[int32](1), Metrics: []autoscalingv2.MetricSpec{cpuUtilization(80)},
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
					ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](0), SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
						Policies: []autoscalingv2.HPAScalingPolicy{{Type: "Pods", Value: 4, PeriodSeconds: 15}, {Type: "Percent", Value: 100, PeriodSeconds: 15}}},
					ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60), SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
						Policies: []autoscalingv2.HPAScalingPolicy{{Type: "Percent", Value: 100, PeriodSeconds: 15}}},
				}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hpa := &autoscalingv2.HorizontalPodAutoscaler{Spec: tc.in}
			defaultHPA(hpa)
			if d := cmp.Diff(tc.want, hpa.Spec); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
