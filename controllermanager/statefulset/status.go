package statefulset

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/mkube/mkube/client"
)

// newStatus is the status the plan's pods make (Kubernetes' updateStatus
// and completeUpdate). `kubectl get sts` shows READY as readyReplicas over
// spec.replicas; `kubectl rollout status` waits for observedGeneration to
// reach the generation, then for updatedReplicas to reach replicas minus
// the partition, then for currentRevision to become updateRevision:
//
//   - replicas: pods that exist (a pod planned for creation does not yet);
//   - readyReplicas: Running and Ready; availableReplicas: ready for
//     minReadySeconds;
//   - currentReplicas, updatedReplicas: live pods labelled with the
//     current, the update revision;
//   - once every pod is updated and ready, the rollout is complete: the
//     update revision becomes current.
//
// Conditions are the set's own, kept: this controller sets none (only the
// alpha Recreate strategy does in Kubernetes), others may.
func newStatus(set *appsv1.StatefulSet, p *plan, current, update *appsv1.ControllerRevision, collisionCount int32, now time.Time) appsv1.StatefulSetStatus {
	st := appsv1.StatefulSetStatus{ObservedGeneration: set.Generation, CurrentRevision: current.Name, UpdateRevision: update.Name,
		CollisionCount: &collisionCount, Conditions: set.Status.Conditions}
	for _, pods := range [][]*corev1.Pod{p.replicas, p.condemned} {
		for _, pod := range pods {
			if isCreated(pod) {
				st.Replicas++
			}
			if isRunningAndReady(pod) {
				st.ReadyReplicas++
				if isAvailable(pod, set.Spec.MinReadySeconds, now) {
					st.AvailableReplicas++
				}
			}
			if isCreated(pod) && !isTerminating(pod) {
				if revisionOf(pod) == current.Name {
					st.CurrentReplicas++
				}
				if revisionOf(pod) == update.Name {
					st.UpdatedReplicas++
				}
			}
		}
	}
	return st
}

// completeUpdate: every pod is at the update revision and ready, so the
// rollout is over and the update revision is the current one.
func completeUpdate(set *appsv1.StatefulSet, st *appsv1.StatefulSetStatus) {
	want := int32(replicasOf(set))
	if st.UpdatedReplicas == want && st.ReadyReplicas == want && st.Replicas == want {
		st.CurrentReplicas = st.UpdatedReplicas
		st.CurrentRevision = st.UpdateRevision
	}
}

// writeStatus completes the update if it is, and writes the status if it
// changed. A conflict (our cache behind our own last write) is retried on
// a fresh read: the counts come from the pods, not from the stored set.
func (c *Controller) writeStatus(ctx context.Context, set *appsv1.StatefulSet, st appsv1.StatefulSetStatus) error {
	completeUpdate(set, &st)
	if equality.Semantic.DeepEqual(st, set.Status) {
		return nil
	}
	next := set.DeepCopy()
	next.Status = st
	err := c.client.UpdateStatus(ctx, client.StatefulSets, set.Namespace, set.Name, next, nil)
	for attempt := 0; apierrors.IsConflict(err) && attempt < 3; attempt++ {
		fresh := &appsv1.StatefulSet{}
		if err = c.client.Get(ctx, client.StatefulSets, set.Namespace, set.Name, fresh); err != nil {
			break
		}
		fresh.Status = st
		err = c.client.UpdateStatus(ctx, client.StatefulSets, set.Namespace, set.Name, fresh, nil)
	}
	if err != nil {
		return fmt.Errorf("update status of %s: %w", keyOf(set), err)
	}
	if st.CurrentRevision != set.Status.CurrentRevision && st.CurrentRevision == st.UpdateRevision && set.Status.CurrentRevision != "" {
		c.log.Info("rolling update complete", "statefulset", keyOf(set), "revision", st.CurrentRevision, "replicas", st.Replicas)
	}
	c.log.Info("updated status", "statefulset", keyOf(set), "replicas", st.Replicas, "ready", st.ReadyReplicas,
		"available", st.AvailableReplicas, "current", st.CurrentReplicas, "updated", st.UpdatedReplicas,
		"currentRevision", st.CurrentRevision, "updateRevision", st.UpdateRevision)
	return nil
}

// requeueForAvailability: a ready pod becomes available minReadySeconds
// after it became ready, which no watch event announces; sync again then.
func (c *Controller) requeueForAvailability(set *appsv1.StatefulSet, p *plan, now time.Time) {
	if set.Spec.MinReadySeconds == 0 {
		return
	}
	var next time.Duration
	for _, pods := range [][]*corev1.Pod{p.replicas, p.condemned} {
		for _, pod := range pods {
			if wait, ready := availableIn(pod, set.Spec.MinReadySeconds, now); ready && wait > 0 && (next == 0 || wait < next) {
				next = wait
			}
		}
	}
	if next > 0 {
		c.queue.AddAfter(keyOf(set), next)
	}
}
