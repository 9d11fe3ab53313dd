package replicaset

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/podcondition"
)

// updateStatus writes the counts `kubectl get rs` shows (DESIRED is the
// spec; CURRENT, READY and AVAILABLE come from here), observedGeneration,
// which tells clients the status describes the latest spec, and the
// ReplicaFailure condition of manageErr, what creating or deleting the
// pods of this sync failed with.
func (c *Controller) updateStatus(ctx context.Context, rs *appsv1.ReplicaSet, active []*corev1.Pod, sel labels.Selector, manageErr error) error {
	tmplLabels := labels.Set(rs.Spec.Template.Labels)
	now := c.clock.Now()
	st := appsv1.ReplicaSetStatus{Replicas: int32(len(active)), ObservedGeneration: rs.Generation,
		Conditions: failureConditions(rs.Status.Conditions, manageErr, len(active)-int(*rs.Spec.Replicas), now)}
	var nextAvailable time.Duration
	for _, p := range active {
		if labels.SelectorFromSet(tmplLabels).Matches(labels.Set(p.Labels)) {
			st.FullyLabeledReplicas++
		}
		if !podcondition.IsReady(p) {
			continue
		}
		st.ReadyReplicas++
		if wait := availableIn(p, rs.Spec.MinReadySeconds, now); wait <= 0 {
			st.AvailableReplicas++
		} else if nextAvailable == 0 || wait < nextAvailable {
			nextAvailable = wait
		}
	}
	if nextAvailable > 0 {
		c.resyncAfter(client.KeyOf(rs), nextAvailable)
	}
	if equality.Semantic.DeepEqual(st, rs.Status) {
		return nil
	}
	err := c.client.UpdateStatus(ctx, c.kind.res, rs.Namespace, rs.Name, c.kind.withStatus(rs, st), nil)
	if apierrors.IsConflict(err) {
		// Our cache is behind our own previous write. The pods, not the
		// ReplicaSet, are what the counts come from, so unless the spec
		// changed meanwhile, retry once on the fresh object.
		fresh := c.kind.res.New()
		if err = c.client.Get(ctx, c.kind.res, rs.Namespace, rs.Name, fresh); err == nil {
			freshRS := c.kind.asReplicaSet(fresh)
			if freshRS.Generation != rs.Generation {
				return nil // the new spec's event queues another sync
			}
			err = c.client.UpdateStatus(ctx, c.kind.res, rs.Namespace, rs.Name, c.kind.withStatus(freshRS, st), nil)
		}
	}
	if err != nil {
		return fmt.Errorf("update status of %s: %w", client.KeyOf(rs), err)
	}
	c.log.Info("updated status", "replicaset", client.KeyOf(rs), "replicas", st.Replicas, "ready", st.ReadyReplicas, "available", st.AvailableReplicas)
	return nil
}

// availableIn is how long until a ready pod counts as available: it must
// have been ready for minReadySeconds.
func availableIn(p *corev1.Pod, minReadySeconds int32, now time.Time) time.Duration {
	if minReadySeconds == 0 {
		return 0
	}
	if c := podcondition.Get(p, corev1.PodReady); c != nil && !c.LastTransitionTime.IsZero() {
		return c.LastTransitionTime.Add(time.Duration(minReadySeconds) * time.Second).Sub(now)
	}
	return 0
}
