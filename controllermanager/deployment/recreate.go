package deployment

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/mkube/mkube/client"
)

// A Recreate rollout never runs two versions at once, at the price of a
// gap with no pods at all (Kubernetes' rolloutRecreate):
//
//  1. scale every old ReplicaSet to 0;
//  2. wait until none of them has pods left;
//  3. only then create the new ReplicaSet (if it does not exist) and scale
//     it to spec.replicas.
//
// Kubernetes waits in step 2 on the pods themselves, counting even those
// being deleted. mkube's controller has no pod informer and reads the old
// ReplicaSets' status instead: status.replicas 0 with observedGeneration
// caught up with the scale-down. The ReplicaSet controller does not count
// pods already being deleted, so a new pod may start while an old one is
// still in its grace period.

// rolloutRecreate is one step of a Recreate rollout.
func (c *Controller) rolloutRecreate(ctx context.Context, d *appsv1.Deployment, owned []*appsv1.ReplicaSet) error {
	// Not creating the new ReplicaSet yet: it must not grow before the
	// old pods are gone.
	newRS, old, _, err := c.newAndOld(ctx, d, owned, false)
	if err != nil {
		return err // retried
	}
	var plan []scaling
	for _, rs := range active(old) {
		plan = append(plan, scaling{rs, 0, "Recreate: every old pod goes before a new one starts"})
	}
	if len(plan) > 0 {
		if err := c.apply(ctx, d, plan); err != nil {
			return err // retried
		}
		return c.syncRolloutStatus(ctx, d, newRS, withNew(old, newRS), false)
	}
	if pods, settled := oldPodsRunning(old); pods > 0 || !settled {
		c.log.Info("recreate waits for the old pods to be gone", "deployment", client.KeyOf(d), "oldPods", pods,
			"replicaSetControllerCaughtUp", settled)
		return c.syncRolloutStatus(ctx, d, newRS, withNew(old, newRS), false)
	}
	created := false
	if newRS == nil {
		if newRS, old, created, err = c.newAndOld(ctx, d, owned, true); err != nil {
			return err // retried
		}
	}
	if err := c.scale(ctx, d, newRS, *d.Spec.Replicas, "Recreate: no old pod is left"); err != nil {
		return err // retried
	}
	if deploymentComplete(d, &d.Status) {
		if err := c.cleanupHistory(ctx, d, old); err != nil {
			return err
		}
	}
	return c.syncRolloutStatus(ctx, d, newRS, withNew(old, newRS), created)
}

// oldPodsRunning counts the pods the old ReplicaSets still have, by their
// status. settled is false while the ReplicaSet controller has not yet
// written the status of an old ReplicaSet's latest spec (observedGeneration
// behind generation): its count may be from before the scale-down, while
// it may still be creating pods.
func oldPodsRunning(old []*appsv1.ReplicaSet) (pods int32, settled bool) {
	settled = true
	for _, rs := range old {
		pods += rs.Status.Replicas
		if rs.Status.ObservedGeneration < rs.Generation {
			settled = false
		}
	}
	return pods, settled
}
