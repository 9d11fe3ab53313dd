package podautoscaler

import (
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// describeCurrent and describeTarget put a metric's value and target in
// the log as `kubectl get hpa` shows them: "250%", "500m".
func describeCurrent(s autoscalingv2.MetricStatus) string {
	var v *autoscalingv2.MetricValueStatus
	switch {
	case s.Resource != nil:
		v = &s.Resource.Current
	case s.ContainerResource != nil:
		v = &s.ContainerResource.Current
	case s.Pods != nil:
		v = &s.Pods.Current
	case s.Object != nil:
		v = &s.Object.Current
	case s.External != nil:
		v = &s.External.Current
	default:
		return "<unknown>"
	}
	switch {
	case v.AverageUtilization != nil:
		return fmt.Sprintf("%d%% (%s)", *v.AverageUtilization, v.AverageValue)
	case v.AverageValue != nil:
		return v.AverageValue.String()
	case v.Value != nil:
		return v.Value.String()
	}
	return "<unknown>"
}

func describeTarget(s autoscalingv2.MetricSpec) string {
	var t *autoscalingv2.MetricTarget
	switch {
	case s.Resource != nil:
		t = &s.Resource.Target
	case s.ContainerResource != nil:
		t = &s.ContainerResource.Target
	case s.Pods != nil:
		t = &s.Pods.Target
	case s.Object != nil:
		t = &s.Object.Target
	case s.External != nil:
		t = &s.External.Target
	default:
		return "<unknown>"
	}
	switch {
	case t.AverageUtilization != nil:
		return fmt.Sprintf("%d%%", *t.AverageUtilization)
	case t.AverageValue != nil:
		return t.AverageValue.String() + " (average)"
	case t.Value != nil:
		return t.Value.String()
	}
	return "<unknown>"
}
