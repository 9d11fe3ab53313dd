package podautoscaler

import (
	"context"
	"errors"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// computeReplicasForMetrics asks every metric of hpa for a count, and
// keeps the largest (upstream's computeReplicasForMetrics): the count,
// the name of the metric that proposed it, and each metric's status.
// When every metric failed, or some failed and the others would scale
// down, it returns -1 and ScalingActive says why: a metric that cannot be
// read must not let the target shrink.
func (c *Controller) computeReplicasForMetrics(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, key string, specReplicas, statusReplicas int32, scaleSelector string) (int32, string, []autoscalingv2.MetricStatus, error) {
	ctx = withLog(ctx, c.log.With("hpa", key))
	selector, err := c.validateAndParseSelector(hpa, scaleSelector)
	if err != nil {
		return -1, "", nil, err
	}
	calc := c.calc.withTolerances(c.tolerancesFor(hpa))
	specs := hpa.Spec.Metrics
	statuses := make([]autoscalingv2.MetricStatus, len(specs))
	var (
		replicas       int32
		metric         string
		invalid        int
		firstError     error
		firstCondition autoscalingv2.HorizontalPodAutoscalerCondition
	)
	for i, spec := range specs {
		proposal, name, condition, err := c.computeReplicasForMetric(ctx, calc, hpa, spec, specReplicas, statusReplicas, selector, &statuses[i])
		if err != nil {
			if invalid == 0 {
				firstError, firstCondition = err, condition
			}
			invalid++
			c.log.Warn("metric could not be read", "hpa", key, "metric", string(spec.Type), "err", err)
			continue
		}
		c.log.Info("metric proposes a replica count", "hpa", key, "metric", name, "current", describeCurrent(statuses[i]),
			"target", describeTarget(spec), "specReplicas", specReplicas, "proposal", proposal)
		if replicas == 0 || proposal > replicas {
			replicas, metric = proposal, name
		}
	}
	if firstError != nil {
		firstError = fmt.Errorf("invalid metrics (%v invalid out of %v), first error is: %v", invalid, len(specs), firstError)
	}
	if invalid >= len(specs) || (invalid > 0 && replicas < specReplicas) {
		c.setCondition(hpa, firstCondition.Type, firstCondition.Status, firstCondition.Reason, "%s", firstCondition.Message)
		return -1, "", statuses, firstError
	}
	c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound", "the HPA was able to successfully calculate a replica count from %s", metric)
	return replicas, metric, statuses, firstError
}

// tolerancesFor is the flag's tolerance, or the autoscaler's behavior's
// for a direction that names one.
func (c *Controller) tolerancesFor(hpa *autoscalingv2.HorizontalPodAutoscaler) tolerances {
	t := c.calc.tolerances
	if b := hpa.Spec.Behavior; b != nil {
		if b.ScaleDown != nil && b.ScaleDown.Tolerance != nil {
			t.scaleDown = b.ScaleDown.Tolerance.AsApproximateFloat64()
		}
		if b.ScaleUp != nil && b.ScaleUp.Tolerance != nil {
			t.scaleUp = b.ScaleUp.Tolerance.AsApproximateFloat64()
		}
	}
	return t
}

// validateAndParseSelector is the target's pods' selector, from its
// scale's status.selector.
func (c *Controller) validateAndParseSelector(hpa *autoscalingv2.HorizontalPodAutoscaler, selector string) (labels.Selector, error) {
	if selector == "" {
		msg := "selector is required"
		c.rec.Event(hpa, corev1.EventTypeWarning, ReasonSelectorRequired, "%s", msg)
		c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", "the HPA target's scale is missing a selector")
		return nil, errors.New(msg)
	}
	parsed, err := labels.Parse(selector)
	if err != nil {
		msg := fmt.Sprintf("couldn't convert selector into a corresponding internal selector object: %v", err)
		c.rec.Event(hpa, corev1.EventTypeWarning, ReasonInvalidSelector, "%s", msg)
		c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", "%s", msg)
		return nil, errors.New(msg)
	}
	return parsed, nil
}

// unableToCompute posts reason's event and is the ScalingActive=False
// condition a failed metric leaves.
func (c *Controller) unableToCompute(hpa *autoscalingv2.HorizontalPodAutoscaler, reason string, err error) autoscalingv2.HorizontalPodAutoscalerCondition {
	c.rec.Event(hpa, corev1.EventTypeWarning, reason, "%s", err.Error())
	return autoscalingv2.HorizontalPodAutoscalerCondition{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionFalse, Reason: reason,
		Message: fmt.Sprintf("the HPA was unable to compute the replica count: %v", err)}
}

func milli(v int64) *resource.Quantity { return resource.NewMilliQuantity(v, resource.DecimalSI) }

// computeReplicasForMetric is one metric's proposal, its name, and, on
// failure, the condition to show; it fills status.
func (c *Controller) computeReplicasForMetric(ctx context.Context, calc *ReplicaCalculator, hpa *autoscalingv2.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec,
	specReplicas, statusReplicas int32, selector labels.Selector, status *autoscalingv2.MetricStatus) (int32, string, autoscalingv2.HorizontalPodAutoscalerCondition, error) {
	none := autoscalingv2.HorizontalPodAutoscalerCondition{}
	switch spec.Type {
	case autoscalingv2.ResourceMetricSourceType:
		r := spec.Resource
		replicas, current, name, err := c.resourceReplicas(ctx, calc, specReplicas, r.Target, r.Name, hpa.Namespace, "", selector)
		if err != nil {
			return 0, "", c.unableToCompute(hpa, ReasonFailedGetResourceMetric, err), fmt.Errorf("failed to get %s resource metric value: %v", r.Name, err)
		}
		*status = autoscalingv2.MetricStatus{Type: spec.Type, Resource: &autoscalingv2.ResourceMetricStatus{Name: r.Name, Current: current}}
		return replicas, name, none, nil
	case autoscalingv2.ContainerResourceMetricSourceType:
		r := spec.ContainerResource
		replicas, current, name, err := c.resourceReplicas(ctx, calc, specReplicas, r.Target, r.Name, hpa.Namespace, r.Container, selector)
		if err != nil {
			return 0, "", c.unableToCompute(hpa, ReasonFailedGetContainerResourceMetric, err), fmt.Errorf("failed to get %s container metric value: %v", r.Container, err)
		}
		*status = autoscalingv2.MetricStatus{Type: spec.Type, ContainerResource: &autoscalingv2.ContainerResourceMetricStatus{Name: r.Name, Container: r.Container, Current: current}}
		return replicas, name, none, nil
	case autoscalingv2.PodsMetricSourceType:
		p := spec.Pods
		metricSelector, err := metav1.LabelSelectorAsSelector(p.Metric.Selector)
		if err == nil && p.Target.AverageValue == nil {
			err = errors.New("invalid pods metric source: no average value target was set")
		}
		if err != nil {
			return 0, "", c.unableToCompute(hpa, ReasonFailedGetPodsMetric, err), fmt.Errorf("failed to get pods metric value: %v", err)
		}
		replicas, usage, _, err := calc.GetMetricReplicas(ctx, specReplicas, p.Target.AverageValue.MilliValue(), p.Metric.Name, hpa.Namespace, selector, metricSelector)
		if err != nil {
			return 0, "", c.unableToCompute(hpa, ReasonFailedGetPodsMetric, err), fmt.Errorf("failed to get pods metric value: %v", err)
		}
		*status = autoscalingv2.MetricStatus{Type: spec.Type, Pods: &autoscalingv2.PodsMetricStatus{Metric: p.Metric,
			Current: autoscalingv2.MetricValueStatus{AverageValue: milli(usage)}}}
		return replicas, "pods metric " + p.Metric.Name, none, nil
	case autoscalingv2.ObjectMetricSourceType:
		return c.objectReplicas(ctx, calc, hpa, spec.Object, specReplicas, statusReplicas, selector, status)
	case autoscalingv2.ExternalMetricSourceType:
		return c.externalReplicas(ctx, calc, hpa, spec.External, specReplicas, statusReplicas, selector, status)
	}
	// The API server's validation lets no other type through.
	err := fmt.Errorf("unknown metric source type %q", string(spec.Type))
	return 0, "", c.unableToCompute(hpa, ReasonInvalidMetricSourceType, err), err
}

// resourceReplicas is the proposal of a Resource or ContainerResource
// metric, by its AverageValue or its AverageUtilization target.
func (c *Controller) resourceReplicas(ctx context.Context, calc *ReplicaCalculator, specReplicas int32, target autoscalingv2.MetricTarget, res corev1.ResourceName,
	namespace, container string, selector labels.Selector) (int32, autoscalingv2.MetricValueStatus, string, error) {
	if target.AverageValue != nil {
		replicas, usage, _, err := calc.GetRawResourceReplicas(ctx, specReplicas, target.AverageValue.MilliValue(), res, namespace, selector, container)
		if err != nil {
			return 0, autoscalingv2.MetricValueStatus{}, "", fmt.Errorf("failed to get %s usage: %v", res, err)
		}
		name := fmt.Sprintf("%s resource", res)
		if container != "" {
			name = fmt.Sprintf("%s container resource", res)
		}
		return replicas, autoscalingv2.MetricValueStatus{AverageValue: milli(usage)}, name, nil
	}
	if target.AverageUtilization == nil {
		return 0, autoscalingv2.MetricValueStatus{}, "", errors.New("invalid resource metric source: neither an average utilization target nor an average value (usage) target was set")
	}
	replicas, utilization, raw, _, err := calc.GetResourceReplicas(ctx, specReplicas, *target.AverageUtilization, res, namespace, selector, container)
	if err != nil {
		return 0, autoscalingv2.MetricValueStatus{}, "", fmt.Errorf("failed to get %s utilization: %v", res, err)
	}
	name := fmt.Sprintf("%s resource utilization (percentage of request)", res)
	if container != "" {
		name = fmt.Sprintf("%s container resource utilization (percentage of request)", res)
	}
	return replicas, autoscalingv2.MetricValueStatus{AverageUtilization: &utilization, AverageValue: milli(raw)}, name, nil
}
