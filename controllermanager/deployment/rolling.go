package deployment

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mkube/mkube/client"
)

// A RollingUpdate replaces pods a few at a time, within two bounds:
//
//	maxTotal     = spec.replicas + maxSurge        pods asked for, old and new together
//	minAvailable = spec.replicas - maxUnavailable  available pods, old and new together
//
// Each sync takes one step, as Kubernetes' rolloutRolling does:
//
//  1. Grow the new ReplicaSet, if maxTotal leaves room:
//     new = min(maxTotal - Σ spec.replicas, spec.replicas - new) more.
//  2. Otherwise shrink old ReplicaSets, oldest first, by at most
//     Σ spec.replicas - minAvailable - (new ReplicaSet's unavailable pods):
//     first their pods that are not available (removing those costs no
//     availability), then available ones as long as Σ available stays
//     ≥ minAvailable.
//
// Worked example, spec.replicas 4, maxSurge 1, maxUnavailable 0
// (maxTotal 5, minAvailable 4), starting from old 4/4 available, new 0:
//
//	step 1: room 5-4 = 1        → new 0→1   (total 5)
//	        new pod not yet available: 5-4-1 = 0 may go → wait
//	step 2: new pod available: 5-4-0 = 1 may go, 5 available > 4 → old 4→3
//	step 3: room 5-4 = 1        → new 1→2
//	...     until new 4, old 0: eight scalings, never more than 5 pods
//	        asked for, never fewer than 4 available.
//
// The rollout advances because each ReplicaSet status write (a new pod
// became available, an old one is gone) requeues the Deployment.

// rolloutRolling is one step of a RollingUpdate.
func (c *Controller) rolloutRolling(ctx context.Context, d *appsv1.Deployment, owned []*appsv1.ReplicaSet) error {
	newRS, old, created, err := c.newAndOld(ctx, d, owned, true)
	if err != nil {
		return err // retried: no new ReplicaSet, no rollout
	}
	all := withNew(old, newRS)
	if plan := planRolling(d, newRS, old); len(plan) > 0 {
		if err := c.apply(ctx, d, plan); err != nil {
			return err // retried: the next sync recomputes the step from fresh data
		}
		return c.syncRolloutStatus(ctx, d, newRS, all, created)
	}
	if deploymentComplete(d, &d.Status) {
		// Only once a rollout is over may history go: mid-rollout an old
		// ReplicaSet may still have pods.
		if err := c.cleanupHistory(ctx, d, old); err != nil {
			return err
		}
	} else if oldPods := specReplicas(old); oldPods > 0 || newRS.Status.AvailableReplicas < *d.Spec.Replicas {
		c.log.Info("rolling update waits for pods to become available", "deployment", client.KeyOf(d),
			"newReplicaSet", newRS.Name, "new", *newRS.Spec.Replicas, "newAvailable", newRS.Status.AvailableReplicas,
			"old", oldPods, "oldAvailable", availableReplicas(old), "maxSurge", maxSurge(d), "maxUnavailable", maxUnavailable(d))
	}
	return c.syncRolloutStatus(ctx, d, newRS, all, created)
}

// planRolling decides one step of a RollingUpdate: grow (or, above
// spec.replicas, shrink) the new ReplicaSet; only if it cannot move,
// shrink old ones. nil means the rollout waits for pods, or is done.
func planRolling(d *appsv1.Deployment, newRS *appsv1.ReplicaSet, old []*appsv1.ReplicaSet) []scaling {
	if s, ok := reconcileNewReplicaSet(d, newRS, old); ok {
		return []scaling{s}
	}
	return reconcileOldReplicaSets(d, newRS, old)
}

// reconcileNewReplicaSet sizes the new ReplicaSet (Kubernetes'
// reconcileNewReplicaSet with NewRSNewReplicas): as large as maxSurge
// allows, never above spec.replicas.
func reconcileNewReplicaSet(d *appsv1.Deployment, newRS *appsv1.ReplicaSet, old []*appsv1.ReplicaSet) (scaling, bool) {
	want, have := *d.Spec.Replicas, *newRS.Spec.Replicas
	if have == want {
		return scaling{}, false
	}
	if have > want {
		return scaling{newRS, want, fmt.Sprintf("the new replicaset has more than spec.replicas=%d", want)}, true
	}
	surge := maxSurge(d)
	maxTotal := want + surge
	total := specReplicas(old) + have
	if total >= maxTotal {
		return scaling{}, false // no room: old pods must go first
	}
	to := have + min(maxTotal-total, want-have)
	return scaling{newRS, to, fmt.Sprintf("maxSurge allows %d pods in all (spec.replicas %d + maxSurge %d) and the replicasets ask for %d",
		maxTotal, want, surge, total)}, true
}

// reconcileOldReplicaSets shrinks old ReplicaSets, oldest first, as far
// as maxUnavailable allows (Kubernetes' reconcileOldReplicaSets, then
// cleanupUnhealthyReplicas and scaleDownOldReplicaSetsForRollingUpdate).
//
// Unlike Kubernetes, a ReplicaSet's available pods are counted as at most
// its spec.replicas: just after a scale-down its status may still count
// pods about to be deleted, which must not pay for another scale-down.
func reconcileOldReplicaSets(d *appsv1.Deployment, newRS *appsv1.ReplicaSet, old []*appsv1.ReplicaSet) []scaling {
	oldTotal := specReplicas(old)
	if oldTotal == 0 {
		return nil // nothing left to scale down
	}
	unavailable := maxUnavailable(d)
	minAvailable := *d.Spec.Replicas - unavailable
	newUnavailable := max(0, *newRS.Spec.Replicas-newRS.Status.AvailableReplicas)
	// The most old pods that may go now. The new ReplicaSet's pods that
	// are not available count against it: while the new version does not
	// work (say its image crashloops), an old pod that fails must not be
	// cleaned up, or the old ReplicaSet would shrink and the new one grow
	// in its place with more pods that do not work.
	budget := oldTotal + *newRS.Spec.Replicas - minAvailable - newUnavailable
	if budget <= 0 {
		return nil
	}
	size := map[*appsv1.ReplicaSet]int32{}
	for _, rs := range old {
		size[rs] = *rs.Spec.Replicas
	}
	byAge := append([]*appsv1.ReplicaSet(nil), old...)
	sortOldestFirst(byAge)
	var plan []scaling

	// First the old pods that are not available: they serve nothing, and
	// would otherwise block the rollout (kubernetes/kubernetes#16737).
	cleaned := int32(0)
	for _, rs := range byAge {
		if cleaned >= budget {
			break
		}
		unhealthy := size[rs] - availableOf(rs, size[rs])
		if unhealthy <= 0 {
			continue
		}
		n := min(budget-cleaned, unhealthy)
		size[rs] -= n
		cleaned += n
		plan = append(plan, scaling{rs, size[rs], fmt.Sprintf("%d of its pods are not available: removing them costs no availability", unhealthy)})
	}

	// Then available ones, as long as minAvailable stays available.
	avail := availableOf(newRS, *newRS.Spec.Replicas)
	for _, rs := range old {
		avail += availableOf(rs, size[rs])
	}
	if avail <= minAvailable {
		return plan
	}
	excess, removed := avail-minAvailable, int32(0)
	for _, rs := range byAge {
		if removed >= excess {
			break
		}
		if size[rs] == 0 {
			continue
		}
		n := min(size[rs], excess-removed)
		size[rs] -= n
		removed += n
		plan = append(plan, scaling{rs, size[rs], fmt.Sprintf("%d pods are available and minAvailable is %d (spec.replicas %d - maxUnavailable %d)",
			avail, minAvailable, *d.Spec.Replicas, unavailable)})
	}
	return plan
}

// availableOf is how many of rs's pods are available and will stay so
// with rs at size replicas.
func availableOf(rs *appsv1.ReplicaSet, size int32) int32 {
	return max(0, min(size, rs.Status.AvailableReplicas))
}

func availableReplicas(rsets []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rsets {
		n += rs.Status.AvailableReplicas
	}
	return n
}

// fenceposts resolves spec.strategy.rollingUpdate against spec.replicas,
// as Kubernetes' ResolveFenceposts: maxSurge rounds up, maxUnavailable
// rounds down (25% of 10 is a surge of 3 and 2 unavailable), and if both
// come to 0 maxUnavailable is 1, or the rollout could never take a step.
// A Recreate Deployment has neither. Values that do not parse count as 0
// (Kubernetes' validation rejects them).
func fenceposts(d *appsv1.Deployment) (surge, unavailable int32) {
	ru := d.Spec.Strategy.RollingUpdate
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil {
		return 0, 0
	}
	replicas := int(*d.Spec.Replicas)
	zero := intstr.FromInt32(0)
	s, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(ru.MaxSurge, zero), replicas, true)
	if err != nil {
		return 0, 0
	}
	u, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(ru.MaxUnavailable, zero), replicas, false)
	if err != nil {
		return 0, 0
	}
	if s == 0 && u == 0 {
		u = 1
	}
	return int32(s), int32(u)
}

// maxSurge is how many pods above spec.replicas a rollout may ask for.
func maxSurge(d *appsv1.Deployment) int32 {
	s, _ := fenceposts(d)
	return s
}

// maxUnavailable is how many pods below spec.replicas may be unavailable,
// at most spec.replicas.
func maxUnavailable(d *appsv1.Deployment) int32 {
	_, u := fenceposts(d)
	return min(u, *d.Spec.Replicas)
}
