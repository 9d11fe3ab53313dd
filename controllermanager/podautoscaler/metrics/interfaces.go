package metrics

import (
	"context"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// PodMetric is one pod's sample of a metric: its value (milli-units:
// millicores for cpu, milli-bytes for memory, as upstream counts them),
// when it was taken and over what window.
type PodMetric struct {
	Timestamp time.Time
	Window    time.Duration
	Value     int64
}

// PodMetricsInfo is the samples of a metric by pod name.
type PodMetricsInfo map[string]PodMetric

// Client is what the HPA controller reads metrics through, upstream's
// MetricsClient: one method per metric source kind.
type Client interface {
	// GetResourceMetric reads the usage of resource by the pods matching
	// selector (summed over their containers, or of container alone when
	// it is not ""), from metrics.k8s.io.
	GetResourceMetric(ctx context.Context, resource corev1.ResourceName, namespace string, selector labels.Selector, container string) (PodMetricsInfo, time.Time, error)
	// GetRawMetric reads a per-pod custom metric from custom.metrics.k8s.io.
	GetRawMetric(ctx context.Context, metricName, namespace string, selector, metricSelector labels.Selector) (PodMetricsInfo, time.Time, error)
	// GetObjectMetric reads a custom metric describing one object.
	GetObjectMetric(ctx context.Context, metricName, namespace string, ref *autoscalingv2.CrossVersionObjectReference, metricSelector labels.Selector) (int64, time.Time, error)
	// GetExternalMetric reads a metric of something outside the cluster
	// from external.metrics.k8s.io: one value per matching series.
	GetExternalMetric(ctx context.Context, metricName, namespace string, selector labels.Selector) ([]int64, time.Time, error)
}
