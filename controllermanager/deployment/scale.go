package deployment

import (
	"context"
	"fmt"
	"math"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
)

// When spec.replicas changes but the template does not (kubectl scale, an
// autoscaler), or while the Deployment is paused, no rollout step is
// taken: the ReplicaSets that exist are resized (Kubernetes' sync and
// scale):
//
//   - if only one ReplicaSet has pods (or none has: then the newest), it
//     gets all of spec.replicas;
//   - if the new ReplicaSet already runs spec.replicas available pods, the
//     old ones go to 0;
//   - otherwise, mid-RollingUpdate, the change is shared out in proportion
//     to each ReplicaSet's size, so the rollout resumes where it stood.
//
// Proportional scaling. allowed = spec.replicas + maxSurge is the new
// total; each ReplicaSet's max-replicas annotation is the total it was
// last sized against. A ReplicaSet of size n gets
//
//	round(n × allowed / max-replicas) - n
//
// more (largest first, the newer first among equals when growing, the
// older first when shrinking), never more in all than allowed - Σ sizes;
// what rounding leaves over goes to the largest. Worked example: 10
// replicas with maxSurge 3 mid-rollout, old 8 + new 5 = 13, scaled to 20
// (maxSurge 5, allowed 25, 12 to add): old gets round(8×25/13) = 15 (+7),
// new round(5×25/13) = 10 (+5): 25, still 8:5 between them.

// scaleWithoutRollout resizes existing ReplicaSets to spec.replicas and
// writes status, without creating or growing a ReplicaSet for a new
// template. why says which case this is, for the log.
func (c *Controller) scaleWithoutRollout(ctx context.Context, d *appsv1.Deployment, owned []*appsv1.ReplicaSet, why string) error {
	newRS, old, _, err := c.newAndOld(ctx, d, owned, false)
	if err != nil {
		return err // retried
	}
	plan := planScale(d, newRS, old)
	for i := range plan {
		plan[i].why = why + ": " + plan[i].why
	}
	if err := c.apply(ctx, d, plan); err != nil {
		return err // retried: the sizes are recomputed from fresh data
	}
	if d.Spec.Paused {
		if err := c.cleanupHistory(ctx, d, old); err != nil {
			return err
		}
	}
	return c.syncDeploymentStatus(ctx, d, newRS, withNew(old, newRS))
}

// isScalingEvent: a ReplicaSet with pods was last sized for another
// spec.replicas than the Deployment's (its desired-replicas annotation).
func isScalingEvent(d *appsv1.Deployment, owned []*appsv1.ReplicaSet) bool {
	for _, rs := range active(owned) {
		if desired, ok := replicaAnnotation(rs, desiredReplicasAnnotation); ok && desired != *d.Spec.Replicas {
			return true
		}
	}
	return false
}

// planScale decides the sizes of a scaling event (Kubernetes' scale).
func planScale(d *appsv1.Deployment, newRS *appsv1.ReplicaSet, old []*appsv1.ReplicaSet) []scaling {
	want := *d.Spec.Replicas
	if rs := activeOrLatest(newRS, old); rs != nil {
		if *rs.Spec.Replicas == want {
			return nil
		}
		return []scaling{{rs, want, "the only replicaset with pods takes all of spec.replicas"}}
	}
	if isSaturated(d, newRS) {
		var plan []scaling
		for _, rs := range active(old) {
			plan = append(plan, scaling{rs, 0, "the new replicaset already runs spec.replicas available pods"})
		}
		return plan
	}
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
		return nil
	}
	rsets := active(withNew(old, newRS))
	allowed := int32(0)
	if want > 0 {
		allowed = want + maxSurge(d)
	}
	toAdd := allowed - specReplicas(rsets)
	sortForProportions(rsets, toAdd > 0)
	sizes := make([]int32, len(rsets))
	added := int32(0)
	for i, rs := range rsets {
		p := proportion(d, rs, toAdd, added)
		sizes[i] = *rs.Spec.Replicas + p
		added += p
	}
	if len(sizes) > 0 && toAdd != 0 {
		sizes[0] = max(0, sizes[0]+toAdd-added) // the rounding leftover goes to the largest
	}
	// Every active ReplicaSet is written, even at an unchanged size: its
	// annotations must record the new spec.replicas, or the next sync
	// would see a scaling event again.
	plan := make([]scaling, len(rsets))
	for i, rs := range rsets {
		plan[i] = scaling{rs, sizes[i], fmt.Sprintf("its share, in proportion to its size, of %+d replicas (spec.replicas %d + maxSurge %d = %d)",
			toAdd, want, maxSurge(d), allowed)}
	}
	return plan
}

// activeOrLatest is the ReplicaSet that takes all of spec.replicas when
// there is no rollout to be proportional to: the only one with pods, or
// if none has, the new one, or else the newest. nil when several have
// pods.
func activeOrLatest(newRS *appsv1.ReplicaSet, old []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	switch rsets := active(withNew(old, newRS)); len(rsets) {
	case 0:
		if newRS != nil {
			return newRS
		}
		if len(old) == 0 {
			return nil
		}
		newest := append([]*appsv1.ReplicaSet(nil), old...)
		sortOldestFirst(newest)
		return newest[len(newest)-1]
	case 1:
		return rsets[0]
	}
	return nil
}

// isSaturated: the new ReplicaSet was sized for this spec.replicas, has
// it, and all its pods are available.
func isSaturated(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	if rs == nil {
		return false
	}
	desired, ok := replicaAnnotation(rs, desiredReplicasAnnotation)
	want := *d.Spec.Replicas
	return ok && desired == want && *rs.Spec.Replicas == want && rs.Status.AvailableReplicas == want
}

// sortForProportions orders ReplicaSets largest first; among equals, the
// newer first when growing and the older first when shrinking.
func sortForProportions(rsets []*appsv1.ReplicaSet, growing bool) {
	sortOldestFirst(rsets)
	if growing {
		for i, j := 0, len(rsets)-1; i < j; i, j = i+1, j-1 {
			rsets[i], rsets[j] = rsets[j], rsets[i]
		}
	}
	sort.SliceStable(rsets, func(i, j int) bool { return *rsets[i].Spec.Replicas > *rsets[j].Spec.Replicas })
}

// proportion is rs's share of toAdd (negative when shrinking), given that
// added has been handed out already: round(n × allowed / max-replicas) - n,
// capped by what is left to hand out.
func proportion(d *appsv1.Deployment, rs *appsv1.ReplicaSet, toAdd, added int32) int32 {
	if *rs.Spec.Replicas == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	left := toAdd - added
	fraction := replicaSetFraction(d, rs)
	if toAdd > 0 {
		return min(fraction, left)
	}
	return max(fraction, left)
}

// replicaSetFraction: how much rs would grow (or shrink) if it kept its
// share of the Deployment's maximum size, from the max-replicas it was last
// sized against (failing that, the Deployment's current pod count) to
// spec.replicas + maxSurge now.
func replicaSetFraction(d *appsv1.Deployment, rs *appsv1.ReplicaSet) int32 {
	n := *rs.Spec.Replicas
	if *d.Spec.Replicas == 0 {
		return -n // scaling to zero: all of it goes
	}
	before, ok := replicaAnnotation(rs, maxReplicasAnnotation)
	if !ok || before == 0 {
		before = d.Status.Replicas
	}
	if before == 0 {
		return 0 // nothing to be proportional to
	}
	now := *d.Spec.Replicas + maxSurge(d)
	return int32(math.Round(float64(n)*float64(now)/float64(before))) - n
}
