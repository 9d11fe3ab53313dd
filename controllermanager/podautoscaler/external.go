package podautoscaler

import (
	"context"
	"errors"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// objectReplicas is the proposal of an Object metric (a custom metric
// describing one object, such as an Ingress's requests per second), by
// its Value or its AverageValue target.
func (c *Controller) objectReplicas(ctx context.Context, calc *ReplicaCalculator, hpa *autoscalingv2.HorizontalPodAutoscaler, o *autoscalingv2.ObjectMetricSource,
	specReplicas, statusReplicas int32, selector labels.Selector, status *autoscalingv2.MetricStatus) (int32, string, autoscalingv2.HorizontalPodAutoscalerCondition, error) {
	fail := func(err error) (int32, string, autoscalingv2.HorizontalPodAutoscalerCondition, error) {
		return 0, "", c.unableToCompute(hpa, ReasonFailedGetObjectMetric, err), fmt.Errorf("failed to get object metric value: %v", err)
	}
	metricSelector, err := metav1.LabelSelectorAsSelector(o.Metric.Selector)
	if err != nil {
		return fail(err)
	}
	var current autoscalingv2.MetricValueStatus
	var replicas int32
	var usage int64
	switch {
	case o.Target.Type == autoscalingv2.ValueMetricType && o.Target.Value != nil:
		replicas, usage, _, err = calc.GetObjectMetricReplicas(ctx, specReplicas, o.Target.Value.MilliValue(), o.Metric.Name, hpa.Namespace, &o.DescribedObject, selector, metricSelector)
		current.Value = milli(usage)
	case o.Target.Type == autoscalingv2.AverageValueMetricType && o.Target.AverageValue != nil:
		replicas, usage, _, err = calc.GetObjectPerPodMetricReplicas(ctx, statusReplicas, o.Target.AverageValue.MilliValue(), o.Metric.Name, hpa.Namespace, &o.DescribedObject, metricSelector)
		current.AverageValue = milli(usage)
	default:
		err = errors.New("invalid object metric source: neither a value target nor an average value target was set")
	}
	if err != nil {
		return fail(err)
	}
	*status = autoscalingv2.MetricStatus{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricStatus{
		DescribedObject: o.DescribedObject, Metric: o.Metric, Current: current}}
	return replicas, fmt.Sprintf("%s metric %s", o.DescribedObject.Kind, o.Metric.Name), autoscalingv2.HorizontalPodAutoscalerCondition{}, nil
}

// externalReplicas is the proposal of an External metric (something
// outside the cluster, such as a queue's length), by its Value or its
// AverageValue target.
func (c *Controller) externalReplicas(ctx context.Context, calc *ReplicaCalculator, hpa *autoscalingv2.HorizontalPodAutoscaler, e *autoscalingv2.ExternalMetricSource,
	specReplicas, statusReplicas int32, selector labels.Selector, status *autoscalingv2.MetricStatus) (int32, string, autoscalingv2.HorizontalPodAutoscalerCondition, error) {
	var current autoscalingv2.MetricValueStatus
	var replicas int32
	var usage int64
	var err error
	switch {
	case e.Target.AverageValue != nil:
		replicas, usage, _, err = calc.GetExternalPerPodMetricReplicas(ctx, statusReplicas, e.Target.AverageValue.MilliValue(), e.Metric.Name, hpa.Namespace, e.Metric.Selector)
		current.AverageValue = milli(usage)
	case e.Target.Value != nil:
		replicas, usage, _, err = calc.GetExternalMetricReplicas(ctx, specReplicas, e.Target.Value.MilliValue(), e.Metric.Name, hpa.Namespace, e.Metric.Selector, selector)
		current.Value = milli(usage)
	default:
		err = errors.New("invalid external metric source: neither a value target nor an average value target was set")
	}
	if err != nil {
		return 0, "", c.unableToCompute(hpa, ReasonFailedGetExternalMetric, err), fmt.Errorf("failed to get %s external metric value: %v", e.Metric.Name, err)
	}
	*status = autoscalingv2.MetricStatus{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricStatus{
		Metric: e.Metric, Current: current}}
	return replicas, fmt.Sprintf("external metric %s(%+v)", e.Metric.Name, e.Metric.Selector), autoscalingv2.HorizontalPodAutoscalerCondition{}, nil
}
