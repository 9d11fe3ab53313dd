package metrics

import (
	"context"
	"fmt"
	"net/url"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mkube/mkube/client"
)

// The three metrics APIs, at the versions upstream's controller reads.
const (
	ResourceMetricsPath = "/apis/metrics.k8s.io/v1beta1"
	CustomMetricsPath   = "/apis/custom.metrics.k8s.io/v1beta2"
	ExternalMetricsPath = "/apis/external.metrics.k8s.io/v1beta1"
)

// defaultWindow is the window of a custom metric that gives none
// (upstream's metricServerDefaultMetricWindow).
const defaultWindow = time.Minute

// ResourceOf names the resource (plural, as in URLs) of a kind at
// apiVersion, as a RESTMapper does: what an Object metric's URL names.
type ResourceOf func(ctx context.Context, apiVersion, kind string) (string, error)

// REST reads the metrics APIs through the API server, which proxies them
// to whoever serves them (a metrics server's APIService).
type REST struct {
	client     *client.Client
	resourceOf ResourceOf
}

// NewREST is a Client reading through c; resourceOf maps Object metrics'
// kinds to their resources.
func NewREST(c *client.Client, resourceOf ResourceOf) *REST {
	return &REST{client: c, resourceOf: resourceOf}
}

// The wire forms of what is read, the fields the controller uses of
// k8s.io/metrics' PodMetrics (metrics.k8s.io/v1beta1), MetricValue
// (custom.metrics.k8s.io/v1beta2) and ExternalMetricValue
// (external.metrics.k8s.io/v1beta1).
type podMetricsList struct {
	Items []struct {
		Metadata   metav1.ObjectMeta `json:"metadata"`
		Timestamp  metav1.Time       `json:"timestamp"`
		Window     metav1.Duration   `json:"window"`
		Containers []struct {
			Name  string              `json:"name"`
			Usage corev1.ResourceList `json:"usage"`
		} `json:"containers"`
	} `json:"items"`
}

type metricValueList struct {
	Items []struct {
		DescribedObject corev1.ObjectReference `json:"describedObject"`
		Timestamp       metav1.Time            `json:"timestamp"`
		WindowSeconds   *int64                 `json:"windowSeconds"`
		Value           resource.Quantity      `json:"value"`
	} `json:"items"`
}

type externalMetricValueList struct {
	Items []struct {
		Timestamp metav1.Time       `json:"timestamp"`
		Value     resource.Quantity `json:"value"`
	} `json:"items"`
}

// GetResourceMetric reads PodMetrics. A pod some of whose containers
// have no sample of resource is left out: it counts as missing.
func (r *REST) GetResourceMetric(ctx context.Context, res corev1.ResourceName, namespace string, selector labels.Selector, container string) (PodMetricsInfo, time.Time, error) {
	var list podMetricsList
	path := ResourceMetricsPath + "/namespaces/" + namespace + "/pods?" + url.Values{"labelSelector": {selector.String()}}.Encode()
	if err := r.client.Do(ctx, "GET", path, nil, &list); err != nil {
		return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from resource metrics API: %v", err)
	}
	if len(list.Items) == 0 {
		return nil, time.Time{}, fmt.Errorf("no metrics returned from resource metrics API")
	}
	out := PodMetricsInfo{}
	for _, pod := range list.Items {
		var sum int64
		found, complete := false, true
		for _, c := range pod.Containers {
			if container != "" && c.Name != container {
				continue
			}
			usage, ok := c.Usage[res]
			if !ok {
				complete = false
				break
			}
			sum += usage.MilliValue()
			found = true
		}
		if container != "" && !found {
			return nil, time.Time{}, fmt.Errorf("failed to get container metrics: container %s not present in metrics for pod %s/%s", container, pod.Metadata.Namespace, pod.Metadata.Name)
		}
		if complete {
			out[pod.Metadata.Name] = PodMetric{Timestamp: pod.Timestamp.Time, Window: pod.Window.Duration, Value: sum}
		}
	}
	return out, list.Items[0].Timestamp.Time, nil
}

// GetRawMetric reads a Pods metric: custom.metrics.k8s.io's
// /namespaces/NS/pods/*/METRIC.
func (r *REST) GetRawMetric(ctx context.Context, metricName, namespace string, selector, metricSelector labels.Selector) (PodMetricsInfo, time.Time, error) {
	var list metricValueList
	q := url.Values{"labelSelector": {selector.String()}}
	if s := metricSelector.String(); s != "" {
		q.Set("metricLabelSelector", s)
	}
	path := CustomMetricsPath + "/namespaces/" + namespace + "/pods/*/" + metricName + "?" + q.Encode()
	if err := r.client.Do(ctx, "GET", path, nil, &list); err != nil {
		return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from custom metrics API: %v", err)
	}
	if len(list.Items) == 0 {
		return nil, time.Time{}, fmt.Errorf("no metrics returned from custom metrics API")
	}
	out := make(PodMetricsInfo, len(list.Items))
	for _, m := range list.Items {
		window := defaultWindow
		if m.WindowSeconds != nil {
			window = time.Duration(*m.WindowSeconds) * time.Second
		}
		out[m.DescribedObject.Name] = PodMetric{Timestamp: m.Timestamp.Time, Window: window, Value: m.Value.MilliValue()}
	}
	return out, list.Items[0].Timestamp.Time, nil
}

// GetObjectMetric reads an Object metric: /namespaces/NS/RESOURCE/NAME/METRIC.
func (r *REST) GetObjectMetric(ctx context.Context, metricName, namespace string, ref *autoscalingv2.CrossVersionObjectReference, metricSelector labels.Selector) (int64, time.Time, error) {
	res, err := r.resourceOf(ctx, ref.APIVersion, ref.Kind)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("unable to fetch metrics from custom metrics API: %v", err)
	}
	path := CustomMetricsPath + "/namespaces/" + namespace + "/" + res + "/" + ref.Name + "/" + metricName
	if s := metricSelector.String(); s != "" {
		path += "?" + url.Values{"metricLabelSelector": {s}}.Encode()
	}
	var list metricValueList
	if err := r.client.Do(ctx, "GET", path, nil, &list); err != nil {
		return 0, time.Time{}, fmt.Errorf("unable to fetch metrics from custom metrics API: %v", err)
	}
	if len(list.Items) == 0 {
		return 0, time.Time{}, fmt.Errorf("no metrics returned from custom metrics API")
	}
	return list.Items[0].Value.MilliValue(), list.Items[0].Timestamp.Time, nil
}

// GetExternalMetric reads an External metric: /namespaces/NS/METRIC.
func (r *REST) GetExternalMetric(ctx context.Context, metricName, namespace string, selector labels.Selector) ([]int64, time.Time, error) {
	path := ExternalMetricsPath + "/namespaces/" + namespace + "/" + metricName
	if s := selector.String(); s != "" {
		path += "?" + url.Values{"labelSelector": {s}}.Encode()
	}
	var list externalMetricValueList
	if err := r.client.Do(ctx, "GET", path, nil, &list); err != nil {
		return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from external metrics API: %v", err)
	}
	if len(list.Items) == 0 {
		return nil, time.Time{}, fmt.Errorf("no metrics returned from external metrics API")
	}
	values := make([]int64, len(list.Items))
	for i, m := range list.Items {
		values[i] = m.Value.MilliValue()
	}
	return values, list.Items[0].Timestamp.Time, nil
}
