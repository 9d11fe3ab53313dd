package daemon

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/podcondition"
)

// daemonStatus computes what `kubectl get ds` shows, node by node (the
// first pod of a node, by byAge, speaks for it):
//
//	desiredNumberScheduled  nodes that should run a daemon pod       DESIRED
//	currentNumberScheduled  of those, nodes that have one            CURRENT
//	numberReady             of those, whose pod is ready             READY
//	updatedNumberScheduled  of those, whose pod is of the current    UP-TO-DATE
//	                        template
//	numberAvailable         ready for minReadySeconds                AVAILABLE
//	numberUnavailable       desired − available
//	numberMisscheduled      nodes that have one but should not run it
func daemonStatus(ds *appsv1.DaemonSet, nodes []*corev1.Node, byNode map[string][]*corev1.Pod, hash string, now metav1.Time) appsv1.DaemonSetStatus {
	st := appsv1.DaemonSetStatus{ObservedGeneration: ds.Status.ObservedGeneration, CollisionCount: ds.Status.CollisionCount,
		Conditions: ds.Status.Conditions}
	p := placementOf(ds)
	for _, node := range nodes {
		shouldRun, _ := p.check(node)
		pods := byNode[node.Name]
		switch {
		case !shouldRun:
			if len(pods) > 0 {
				st.NumberMisscheduled++
			}
			continue
		case len(pods) == 0:
			st.DesiredNumberScheduled++
			continue
		}
		st.DesiredNumberScheduled++
		st.CurrentNumberScheduled++
		pod := slices.MinFunc(pods, byAge)
		if podcondition.IsReady(pod) {
			st.NumberReady++
			if isAvailable(pod, ds.Spec.MinReadySeconds, now) {
				st.NumberAvailable++
			}
		}
		if isUpdated(pod, hash, ds) {
			st.UpdatedNumberScheduled++
		}
	}
	st.NumberUnavailable = st.DesiredNumberScheduled - st.NumberAvailable
	return st
}

// updateStatus writes the counts and, if observed, the generation this
// sync acted on: a sync that only counts (expectations outstanding) does
// not claim to have seen the new spec. Nothing is written when nothing
// changed. A conflict (our cache behind our own earlier write) is retried
// once on a fresh copy, as Kubernetes' storeDaemonSetStatus.
func (c *Controller) updateStatus(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, hash string, observed bool) error {
	byNode, err := c.nodesToDaemonPods(ctx, ds, false)
	if err != nil {
		return fmt.Errorf("map nodes to daemon pods of %s: %w", client.KeyOf(ds), err)
	}
	st := daemonStatus(ds, nodes, byNode, hash, c.now())
	if ds.Spec.MinReadySeconds > 0 && st.NumberReady != st.NumberAvailable {
		// Pods turn available with time alone: look again then.
		c.queue.AddAfter(client.KeyOf(ds), secondsOf(ds.Spec.MinReadySeconds))
	}
	if sameCounts(ds.Status, st) && ds.Status.ObservedGeneration >= ds.Generation {
		return nil
	}
	next := ds.DeepCopy()
	for attempt := 0; ; attempt++ {
		counts := st
		counts.ObservedGeneration, counts.CollisionCount, counts.Conditions = next.Status.ObservedGeneration, next.Status.CollisionCount, next.Status.Conditions
		if observed {
			counts.ObservedGeneration = ds.Generation
		}
		next.Status = counts
		err := c.client.UpdateStatus(ctx, client.DaemonSets, ds.Namespace, ds.Name, next, nil)
		if err == nil {
			c.log.Info("updated status", "daemonset", client.KeyOf(ds), "desired", st.DesiredNumberScheduled, "current", st.CurrentNumberScheduled,
				"ready", st.NumberReady, "upToDate", st.UpdatedNumberScheduled, "available", st.NumberAvailable, "misscheduled", st.NumberMisscheduled)
			return nil
		}
		if attempt >= 1 {
			return fmt.Errorf("update status of %s: %w", client.KeyOf(ds), err)
		}
		next = &appsv1.DaemonSet{}
		if err := c.client.Get(ctx, client.DaemonSets, ds.Namespace, ds.Name, next); err != nil {
			return fmt.Errorf("get %s: %w", client.KeyOf(ds), err)
		}
	}
}

// sameCounts compares the counts updateStatus writes.
func sameCounts(a, b appsv1.DaemonSetStatus) bool {
	return a.DesiredNumberScheduled == b.DesiredNumberScheduled && a.CurrentNumberScheduled == b.CurrentNumberScheduled &&
		a.NumberMisscheduled == b.NumberMisscheduled && a.NumberReady == b.NumberReady &&
		a.UpdatedNumberScheduled == b.UpdatedNumberScheduled && a.NumberAvailable == b.NumberAvailable &&
		a.NumberUnavailable == b.NumberUnavailable
}
