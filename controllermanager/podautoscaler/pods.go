package podautoscaler

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/mkube/mkube/controllermanager/podautoscaler/metrics"
)

// groupPods sorts the pods (upstream's groupPods): being deleted or
// failed, ignored; pending, unready; without a sample, missing. For cpu
// a pod is also unready while its samples may still show start-up work:
// within cpuInitializationPeriod of its start, when it is not ready or
// its sample began before it became ready; after it, only when it never
// became ready (its readiness last changed within
// delayOfInitialReadinessStatus of its start, to false).
func (c *ReplicaCalculator) groupPods(pods []*corev1.Pod, samples metrics.PodMetricsInfo, resource corev1.ResourceName) podGroups {
	g := podGroups{unready: sets.New[string](), missing: sets.New[string](), ignored: sets.New[string]()}
	now := c.clock.Now()
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodFailed {
			g.ignored.Insert(pod.Name)
			continue
		}
		if pod.Status.Phase == corev1.PodPending {
			g.unready.Insert(pod.Name)
			continue
		}
		sample, found := samples[pod.Name]
		if !found {
			g.missing.Insert(pod.Name)
			continue
		}
		if resource == corev1.ResourceCPU {
			ready := readyCondition(pod)
			start := pod.Status.StartTime
			var unready bool
			switch {
			case ready == nil || start == nil:
				unready = true
			case start.Add(c.cpuInitializationPeriod).After(now):
				unready = ready.Status == corev1.ConditionFalse || sample.Timestamp.Before(ready.LastTransitionTime.Add(sample.Window))
			default:
				unready = ready.Status == corev1.ConditionFalse && start.Add(c.delayOfInitialReadinessStatus).After(ready.LastTransitionTime.Time)
			}
			if unready {
				g.unready.Insert(pod.Name)
				continue
			}
		}
		g.readyCount++
	}
	return g
}

func readyCondition(pod *corev1.Pod) *corev1.PodCondition {
	for i, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

func podReady(pod *corev1.Pod) bool {
	c := readyCondition(pod)
	return c != nil && c.Status == corev1.ConditionTrue
}

// calculatePodRequests sums each pod's requests of resource over its
// containers (and its sidecars: init containers that keep running), or
// of container alone: milli-units by pod name. Utilization means nothing
// without them, hence the error upstream words as "missing request for cpu".
func calculatePodRequests(pods []*corev1.Pod, container string, resource corev1.ResourceName) (map[string]int64, error) {
	requests := make(map[string]int64, len(pods))
	for _, pod := range pods {
		containers := append([]corev1.Container{}, pod.Spec.Containers...)
		for _, c := range pod.Spec.InitContainers {
			if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				containers = append(containers, c)
			}
		}
		var podSum int64
		for _, c := range containers {
			if container != "" && container != c.Name {
				continue
			}
			request, ok := c.Resources.Requests[resource]
			if !ok {
				return nil, fmt.Errorf("missing request for %s in container %s of Pod %s", resource, c.Name, pod.Name)
			}
			podSum += request.MilliValue()
		}
		requests[pod.Name] = podSum
	}
	return requests, nil
}
