package podautoscaler

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/controllermanager/podautoscaler/metrics"
)

// ReplicaCalculator turns a metric and its target into a replica count,
// upstream's replica_calculator.go: desired = ceil(ratio × pods), no
// change within the tolerance, and the pods that cannot be trusted (not
// ready yet, no sample) counted so that they never push the scale the
// way their absence would.
type ReplicaCalculator struct {
	metrics metrics.Client
	// pods lists the pods of namespace matching selector (the informer's
	// cache).
	pods       func(namespace string, selector labels.Selector) []*corev1.Pod
	tolerances tolerances
	// cpuInitializationPeriod: a pod's CPU samples are suspect for this
	// long after it starts (start-up work is not load).
	cpuInitializationPeriod time.Duration
	// delayOfInitialReadinessStatus: a pod not ready within this long of
	// its start is taken to have never been ready.
	delayOfInitialReadinessStatus time.Duration
	clock                         clock.PassiveClock
	log                           *slog.Logger
}

// GetResourceReplicas is the replica count for a utilization target (a
// percentage of the containers' requests of resource), the utilization
// now and the raw average usage per pod.
func (c *ReplicaCalculator) GetResourceReplicas(ctx context.Context, currentReplicas, targetUtilization int32, resource corev1.ResourceName, namespace string, selector labels.Selector, container string) (replicas, utilization int32, rawUsage int64, timestamp time.Time, err error) {
	samples, timestamp, err := c.metrics.GetResourceMetric(ctx, resource, namespace, selector, container)
	if err != nil {
		return 0, 0, 0, time.Time{}, fmt.Errorf("unable to get metrics for resource %s: %v", resource, err)
	}
	pods := c.pods(namespace, selector)
	if len(pods) == 0 {
		return 0, 0, 0, time.Time{}, fmt.Errorf("no pods returned by selector while calculating replica count")
	}
	g := c.groupPods(pods, samples, resource)
	g.dropUntrusted(samples)
	if len(samples) == 0 {
		return 0, 0, 0, time.Time{}, fmt.Errorf("did not receive metrics for targeted pods (pods might be unready)")
	}
	requests, err := calculatePodRequests(pods, container, resource)
	if err != nil {
		return 0, 0, 0, time.Time{}, err
	}
	ratio, utilization, rawUsage, err := metrics.GetResourceUtilizationRatio(samples, requests, targetUtilization)
	if err != nil {
		return 0, 0, 0, time.Time{}, err
	}
	// On a scale-down, a pod without a sample counts as using all of its
	// request (or the target, when that is above 100%).
	fullUse := func(pod string) int64 { return requests[pod] * int64(max(100, targetUtilization)) / 100 }
	reratio := func(m metrics.PodMetricsInfo) (float64, error) {
		r, _, _, err := metrics.GetResourceUtilizationRatio(m, requests, targetUtilization)
		return r, err
	}
	replicas, err = c.decide(ctx, currentReplicas, g, samples, ratio, fullUse, reratio)
	return replicas, utilization, rawUsage, timestamp, err
}

// GetRawResourceReplicas is the replica count for an average value target
// of resource (milli-units), and the average usage now.
func (c *ReplicaCalculator) GetRawResourceReplicas(ctx context.Context, currentReplicas int32, targetUsage int64, resource corev1.ResourceName, namespace string, selector labels.Selector, container string) (int32, int64, time.Time, error) {
	samples, timestamp, err := c.metrics.GetResourceMetric(ctx, resource, namespace, selector, container)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get metrics for resource %s: %v", resource, err)
	}
	replicas, usage, err := c.calcPlainMetricReplicas(ctx, samples, currentReplicas, targetUsage, namespace, selector, resource)
	return replicas, usage, timestamp, err
}

// GetMetricReplicas is the replica count for a Pods metric's average
// value target, and the average now.
func (c *ReplicaCalculator) GetMetricReplicas(ctx context.Context, currentReplicas int32, targetUsage int64, metricName, namespace string, selector, metricSelector labels.Selector) (int32, int64, time.Time, error) {
	samples, timestamp, err := c.metrics.GetRawMetric(ctx, metricName, namespace, selector, metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get metric %s: %v", metricName, err)
	}
	replicas, usage, err := c.calcPlainMetricReplicas(ctx, samples, currentReplicas, targetUsage, namespace, selector, "")
	return replicas, usage, timestamp, err
}

// calcPlainMetricReplicas is the calculation against an average value:
// the same adjustments as for utilization, a missing pod counting as
// exactly on target on a scale-down.
func (c *ReplicaCalculator) calcPlainMetricReplicas(ctx context.Context, samples metrics.PodMetricsInfo, currentReplicas int32, targetUsage int64, namespace string, selector labels.Selector, resource corev1.ResourceName) (int32, int64, error) {
	pods := c.pods(namespace, selector)
	if len(pods) == 0 {
		return 0, 0, fmt.Errorf("no pods returned by selector while calculating replica count")
	}
	g := c.groupPods(pods, samples, resource)
	g.dropUntrusted(samples)
	if len(samples) == 0 {
		return 0, 0, fmt.Errorf("did not receive metrics for targeted pods (pods might be unready)")
	}
	ratio, usage := metrics.GetMetricUsageRatio(samples, targetUsage)
	reratio := func(m metrics.PodMetricsInfo) (float64, error) {
		r, _ := metrics.GetMetricUsageRatio(m, targetUsage)
		return r, nil
	}
	replicas, err := c.decide(ctx, currentReplicas, g, samples, ratio, func(string) int64 { return targetUsage }, reratio)
	return replicas, usage, err
}

// decide is the count from ratio, the usage of the trusted samples over
// their target. When pods lack samples, or unready pods would be part of
// a scale-up, it fills them in against the move (missing pods at full use
// on a scale-down and at 0 on a scale-up; unready ones at 0) and keeps
// the current count if the move then shrinks into the tolerance or
// changes direction.
func (c *ReplicaCalculator) decide(ctx context.Context, currentReplicas int32, g podGroups, samples metrics.PodMetricsInfo, ratio float64,
	fullUse func(pod string) int64, reratio func(metrics.PodMetricsInfo) (float64, error)) (int32, error) {
	log := logFrom(ctx, c.log)
	scaleUpWithUnready := len(g.unready) > 0 && ratio > 1.0
	if !scaleUpWithUnready && len(g.missing) == 0 {
		if c.tolerances.isWithin(ratio) {
			log.Info("usage ratio within the tolerance: keep the current count", "ratio", ratio, "tolerance", c.tolerances, "replicas", currentReplicas)
			return currentReplicas, nil // the change would be too small
		}
		replicas := int32(math.Ceil(ratio * float64(g.readyCount)))
		log.Info("desired = ceil(ratio × ready pods)", "ratio", ratio, "readyPods", g.readyCount, "desired", replicas)
		return replicas, nil
	}
	if len(g.missing) > 0 {
		for pod := range g.missing {
			switch {
			case ratio < 1.0:
				samples[pod] = metrics.PodMetric{Value: fullUse(pod)}
			case ratio > 1.0:
				samples[pod] = metrics.PodMetric{Value: 0}
			}
		}
	}
	if scaleUpWithUnready {
		for pod := range g.unready {
			samples[pod] = metrics.PodMetric{Value: 0}
		}
	}
	newRatio, err := reratio(samples)
	if err != nil {
		return 0, err
	}
	log.Info("usage ratio recomputed with the pods that could not be trusted filled in against the move",
		"ratio", ratio, "newRatio", newRatio, "missingPods", len(g.missing), "unreadyPods", len(g.unready), "scaleUpWithUnready", scaleUpWithUnready)
	if c.tolerances.isWithin(newRatio) || (ratio < 1.0 && newRatio > 1.0) || (ratio > 1.0 && newRatio < 1.0) {
		log.Info("with those pods filled in, the change is within the tolerance or turns the other way: keep the current count", "replicas", currentReplicas)
		return currentReplicas, nil
	}
	replicas := int32(math.Ceil(newRatio * float64(len(samples))))
	if (newRatio < 1.0 && replicas > currentReplicas) || (newRatio > 1.0 && replicas < currentReplicas) {
		log.Info("counting those pods turns the direction: keep the current count", "replicas", currentReplicas, "wouldBe", replicas)
		return currentReplicas, nil
	}
	log.Info("desired = ceil(new ratio × pods counted)", "newRatio", newRatio, "podsCounted", len(samples), "desired", replicas)
	return replicas, nil
}

// GetObjectMetricReplicas is the count for an Object metric's Value
// target: the object's value over the target, times the ready pods.
func (c *ReplicaCalculator) GetObjectMetricReplicas(ctx context.Context, currentReplicas int32, targetUsage int64, metricName, namespace string, ref *autoscalingv2.CrossVersionObjectReference, selector, metricSelector labels.Selector) (int32, int64, time.Time, error) {
	usage, timestamp, err := c.metrics.GetObjectMetric(ctx, metricName, namespace, ref, metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get metric %s: %v on %s %s/%s", metricName, err, ref.Kind, namespace, ref.Name)
	}
	replicas, err := c.getUsageRatioReplicaCount(currentReplicas, float64(usage)/float64(targetUsage), namespace, selector)
	return replicas, usage, timestamp, err
}

// GetObjectPerPodMetricReplicas is the count for an Object metric's
// AverageValue target: the value shared by the pods.
func (c *ReplicaCalculator) GetObjectPerPodMetricReplicas(ctx context.Context, statusReplicas int32, targetAverageUsage int64, metricName, namespace string, ref *autoscalingv2.CrossVersionObjectReference, metricSelector labels.Selector) (int32, int64, time.Time, error) {
	usage, timestamp, err := c.metrics.GetObjectMetric(ctx, metricName, namespace, ref, metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get metric %s: %v on %s %s/%s", metricName, err, ref.Kind, namespace, ref.Name)
	}
	return c.perPodReplicas(statusReplicas, usage, targetAverageUsage), perPod(usage, statusReplicas), timestamp, nil
}

// GetExternalMetricReplicas is the count for an External metric's Value
// target (the sum of the matching series).
func (c *ReplicaCalculator) GetExternalMetricReplicas(ctx context.Context, currentReplicas int32, targetUsage int64, metricName, namespace string, metricSelector *metav1.LabelSelector, podSelector labels.Selector) (int32, int64, time.Time, error) {
	usage, timestamp, err := c.externalUsage(ctx, metricName, namespace, metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, err
	}
	replicas, err := c.getUsageRatioReplicaCount(currentReplicas, float64(usage)/float64(targetUsage), namespace, podSelector)
	return replicas, usage, timestamp, err
}

// GetExternalPerPodMetricReplicas is the count for an External metric's
// AverageValue target.
func (c *ReplicaCalculator) GetExternalPerPodMetricReplicas(ctx context.Context, statusReplicas int32, targetUsagePerPod int64, metricName, namespace string, metricSelector *metav1.LabelSelector) (int32, int64, time.Time, error) {
	usage, timestamp, err := c.externalUsage(ctx, metricName, namespace, metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, err
	}
	return c.perPodReplicas(statusReplicas, usage, targetUsagePerPod), perPod(usage, statusReplicas), timestamp, nil
}

// externalUsage is the sum of an external metric's matching series.
func (c *ReplicaCalculator) externalUsage(ctx context.Context, metricName, namespace string, metricSelector *metav1.LabelSelector) (int64, time.Time, error) {
	selector, err := metav1.LabelSelectorAsSelector(metricSelector)
	if err != nil {
		return 0, time.Time{}, err
	}
	values, timestamp, err := c.metrics.GetExternalMetric(ctx, metricName, namespace, selector)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("unable to get external metric %s/%s/%+v: %s", namespace, metricName, metricSelector, err)
	}
	var usage int64
	for _, v := range values {
		usage += v
	}
	return usage, timestamp, nil
}

// perPodReplicas: enough pods for usage at targetPerPod each, unless
// that is within the tolerance of the pods there are.
func (c *ReplicaCalculator) perPodReplicas(statusReplicas int32, usage, targetPerPod int64) int32 {
	ratio := float64(usage) / (float64(targetPerPod) * float64(statusReplicas))
	if c.tolerances.isWithin(ratio) {
		return statusReplicas
	}
	return int32(math.Ceil(float64(usage) / float64(targetPerPod)))
}

// getUsageRatioReplicaCount is ceil(ratio × ready pods), or the current
// count within the tolerance; from 0 replicas, ceil(ratio).
func (c *ReplicaCalculator) getUsageRatioReplicaCount(currentReplicas int32, ratio float64, namespace string, selector labels.Selector) (int32, error) {
	if currentReplicas == 0 {
		return int32(math.Ceil(ratio)), nil
	}
	if c.tolerances.isWithin(ratio) {
		return currentReplicas, nil
	}
	ready, err := c.readyPodCount(namespace, selector)
	if err != nil {
		return 0, fmt.Errorf("unable to calculate ready pods: %s", err)
	}
	return int32(math.Ceil(ratio * float64(ready))), nil
}

func (c *ReplicaCalculator) readyPodCount(namespace string, selector labels.Selector) (int64, error) {
	pods := c.pods(namespace, selector)
	if len(pods) == 0 {
		return 0, fmt.Errorf("no pods returned by selector while calculating replica count")
	}
	var ready int64
	for _, pod := range pods {
		if pod.Status.Phase == corev1.PodRunning && podReady(pod) {
			ready++
		}
	}
	return ready, nil
}

// perPod is the average reported for a per-pod target: the total over
// the replicas (0 replicas shows the total).
func perPod(usage int64, replicas int32) int64 {
	if replicas == 0 {
		return usage
	}
	return int64(math.Ceil(float64(usage) / float64(replicas)))
}

// podGroups sorts the selected pods by how far their samples are trusted.
type podGroups struct {
	readyCount int
	unready    sets.Set[string] // pending, or (for cpu) not ready or just started
	missing    sets.Set[string] // no sample
	ignored    sets.Set[string] // being deleted, or failed
}

// dropUntrusted removes the samples of ignored and unready pods.
func (g podGroups) dropUntrusted(samples metrics.PodMetricsInfo) {
	for pod := range g.ignored.Union(g.unready) {
		delete(samples, pod)
	}
}

// tolerances are how far below and above 1 the usage ratio may be
// before the count changes: the flag's, or a behavior's own per direction
// (scaleDown.tolerance, scaleUp.tolerance; upstream's
// HPAConfigurableTolerance, on by default since Kubernetes 1.34).
type tolerances struct {
	scaleDown, scaleUp float64
}

func (t tolerances) isWithin(ratio float64) bool {
	return 1.0-t.scaleDown <= ratio && ratio <= 1.0+t.scaleUp
}

func (t tolerances) String() string { return fmt.Sprintf("-%g/+%g", t.scaleDown, t.scaleUp) }

// withTolerances is the calculator with t, for one autoscaler's sync.
func (c *ReplicaCalculator) withTolerances(t tolerances) *ReplicaCalculator {
	copied := *c
	copied.tolerances = t
	return &copied
}

// logKey carries, in a sync's context, the log tagged with the
// autoscaler, so the calculator's lines say whose numbers they are.
type logKey struct{}

func withLog(ctx context.Context, log *slog.Logger) context.Context {
	return context.WithValue(ctx, logKey{}, log)
}

func logFrom(ctx context.Context, fallback *slog.Logger) *slog.Logger {
	if log, ok := ctx.Value(logKey{}).(*slog.Logger); ok {
		return log
	}
	return fallback
}
