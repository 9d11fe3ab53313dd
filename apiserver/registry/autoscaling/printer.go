package autoscaling

import (
	"fmt"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"

	"github.com/mkube/mkube/apiserver"
)

// The columns of `kubectl get hpa` (Kubernetes' printers.go).
var hpaColumns = []apiserver.Column{{Name: "Reference", Type: "string"}, {Name: "Targets", Type: "string"},
	{Name: "MinPods", Type: "string"}, {Name: "MaxPods", Type: "string"}, {Name: "Replicas", Type: "string"}, {Name: "Age", Type: "string"}}

func hpaRow(hpa *autoscalingv2.HorizontalPodAutoscaler, now time.Time) []any {
	minPods := "<unset>"
	if hpa.Spec.MinReplicas != nil {
		minPods = fmt.Sprint(*hpa.Spec.MinReplicas)
	}
	ref := hpa.Spec.ScaleTargetRef
	return []any{ref.Kind + "/" + ref.Name, formatMetrics(hpa.Spec.Metrics, hpa.Status.CurrentMetrics), minPods,
		int64(hpa.Spec.MaxReplicas), int64(hpa.Status.CurrentReplicas), apiserver.Age(hpa.CreationTimestamp, now)}
}

// maxShownMetrics: TARGETS shows two metrics and counts the rest.
const maxShownMetrics = 2

// formatMetrics is Kubernetes' formatHPAMetrics: each metric as
// current/target, matched to the status by position, "<unknown>" for a
// current value not measured yet ("cpu: <unknown>/80%" until an HPA
// controller reads the metrics, which with mkube is never).
func formatMetrics(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return "<none>"
	}
	var list []string
	for i, spec := range specs {
		var st *autoscalingv2.MetricStatus
		if i < len(statuses) {
			st = &statuses[i]
		}
		list = append(list, formatMetric(spec, st))
	}
	if len(list) > maxShownMetrics {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:maxShownMetrics], ", "), len(list)-maxShownMetrics)
	}
	return strings.Join(list, ", ")
}

func formatMetric(spec autoscalingv2.MetricSpec, st *autoscalingv2.MetricStatus) string {
	current := "<unknown>"
	switch s := spec; {
	case s.Type == autoscalingv2.ExternalMetricSourceType && s.External != nil:
		if avg := s.External.Target.AverageValue; avg != nil {
			if st != nil && st.External != nil && st.External.Current.AverageValue != nil {
				current = st.External.Current.AverageValue.String()
			}
			return fmt.Sprintf("%s/%s (avg)", current, avg.String())
		}
		if st != nil && st.External != nil {
			current = st.External.Current.Value.String()
		}
		return fmt.Sprintf("%s/%s", current, s.External.Target.Value.String())
	case s.Type == autoscalingv2.PodsMetricSourceType && s.Pods != nil:
		if st != nil && st.Pods != nil {
			current = st.Pods.Current.AverageValue.String()
		}
		return fmt.Sprintf("%s/%s", current, s.Pods.Target.AverageValue.String())
	case s.Type == autoscalingv2.ObjectMetricSourceType && s.Object != nil:
		if avg := s.Object.Target.AverageValue; avg != nil {
			if st != nil && st.Object != nil && st.Object.Current.AverageValue != nil {
				current = st.Object.Current.AverageValue.String()
			}
			return fmt.Sprintf("%s/%s (avg)", current, avg.String())
		}
		if st != nil && st.Object != nil {
			current = st.Object.Current.Value.String()
		}
		return fmt.Sprintf("%s/%s", current, s.Object.Target.Value.String())
	case s.Type == autoscalingv2.ResourceMetricSourceType && s.Resource != nil:
		var cur *autoscalingv2.MetricValueStatus
		if st != nil && st.Resource != nil {
			cur = &st.Resource.Current
		}
		return string(s.Resource.Name) + ": " + resourceTarget(s.Resource.Target, cur)
	case s.Type == autoscalingv2.ContainerResourceMetricSourceType && s.ContainerResource != nil:
		var cur *autoscalingv2.MetricValueStatus
		if st != nil && st.ContainerResource != nil {
			cur = &st.ContainerResource.Current
		}
		return string(s.ContainerResource.Name) + ": " + resourceTarget(s.ContainerResource.Target, cur)
	}
	return "<unknown type>"
}

// resourceTarget is a (container) resource metric's current/target: a
// raw average value, or a utilization in percent of the requests.
func resourceTarget(t autoscalingv2.MetricTarget, cur *autoscalingv2.MetricValueStatus) string {
	current := "<unknown>"
	if t.AverageValue != nil {
		if cur != nil {
			current = cur.AverageValue.String()
		}
		return current + "/" + t.AverageValue.String()
	}
	if cur != nil && cur.AverageUtilization != nil {
		current = fmt.Sprintf("%d%%", *cur.AverageUtilization)
	}
	target := "<auto>"
	if t.AverageUtilization != nil {
		target = fmt.Sprintf("%d%%", *t.AverageUtilization)
	}
	return current + "/" + target
}
