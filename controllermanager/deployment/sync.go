package deployment

import (
	"context"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
)

// sync brings one Deployment's ReplicaSets one step closer to its spec,
// choosing the path as Kubernetes' syncDeployment does (see the package
// doc). A returned error requeues the key with backoff; a Conflict (our
// cache was behind another writer) is the usual one, and the retry reads
// the fresher cache.
func (c *Controller) sync(ctx context.Context, key string) error {
	obj, ok := c.deploy.Cache().Get(key)
	if !ok {
		return nil // deleted: the garbage collector removes its ReplicaSets
	}
	d := obj.(*appsv1.Deployment) // the cache's: read only, status writes copy it
	if d.DeletionTimestamp != nil {
		return nil // being deleted: nothing to roll out, the garbage collector is at work
	}
	owned, err := c.claimReplicaSets(ctx, d)
	if err != nil {
		return err // retried: the claim is read again from the cache
	}

	// Pausing and resuming are recorded first, as the Progressing
	// condition, so that the time a Deployment spent paused never counts
	// against its progress deadline. The write returns the fresh object,
	// so the status written at the end is not a conflict with it.
	d, err = c.syncPausedCondition(ctx, d)
	if err != nil {
		return err // retried: the condition is written before anything else moves
	}
	// From here each path returns its error as it is: retried with
	// backoff, and the retry recomputes its step from the cache of then.
	switch {
	case d.Spec.Paused:
		return c.scaleWithoutRollout(ctx, d, owned, "paused")
	case isScalingEvent(d, owned):
		return c.scaleWithoutRollout(ctx, d, owned, "spec.replicas changed")
	}
	switch d.Spec.Strategy.Type {
	case appsv1.RecreateDeploymentStrategyType:
		return c.rolloutRecreate(ctx, d, owned)
	case appsv1.RollingUpdateDeploymentStrategyType:
		return c.rolloutRolling(ctx, d, owned)
	}
	// The API server rejects other types, as Kubernetes' does; one stored
	// before that check cannot be rolled out, and retrying cannot help
	// until the spec changes, which requeues the Deployment anyway: absorb.
	c.log.Warn("unknown strategy type, not rolling out", "deployment", key, "type", d.Spec.Strategy.Type)
	return nil
}

// ownedReplicaSets are private copies of the ReplicaSets whose controller
// ownerReference is d, oldest first (by creation time, then name), the
// order Kubernetes uses to choose among ReplicaSets.
func (c *Controller) ownedReplicaSets(d *appsv1.Deployment) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, obj := range c.rsets.Cache().ByIndex(client.IndexByOwnerUID, string(d.UID)) {
		rs := obj.(*appsv1.ReplicaSet)
		if ref := metav1.GetControllerOf(rs); ref != nil && ref.UID == d.UID {
			out = append(out, rs.DeepCopy()) // sync updates its copies as it writes
		}
	}
	sortOldestFirst(out)
	return out
}

// newAndOld splits d's ReplicaSets into the one running its current
// template and the others (Kubernetes' getAllReplicaSetsAndSyncRevision).
// An existing new ReplicaSet gets its revision brought up to date; a
// missing one is created, with zero replicas, only if create is set: a
// paused Deployment, or a Recreate whose old pods still run, must not have
// it yet. created reports that this call made it.
func (c *Controller) newAndOld(ctx context.Context, d *appsv1.Deployment, owned []*appsv1.ReplicaSet, create bool) (newRS *appsv1.ReplicaSet, old []*appsv1.ReplicaSet, created bool, err error) {
	newRS, old = splitByTemplate(d, owned)
	switch {
	case newRS != nil:
		err = c.syncRevision(ctx, d, newRS, old)
	case create:
		newRS, err = c.createReplicaSet(ctx, d, maxRevision(old)+1)
		created = err == nil
	}
	return newRS, old, created, err
}

// splitByTemplate finds the ReplicaSet running d's current template: the
// oldest one if several do, as owned is sorted oldest first.
func splitByTemplate(d *appsv1.Deployment, owned []*appsv1.ReplicaSet) (cur *appsv1.ReplicaSet, old []*appsv1.ReplicaSet) {
	for _, rs := range owned {
		if cur == nil && equalIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
			cur = rs
		} else {
			old = append(old, rs)
		}
	}
	return cur, old
}

// withNew is every ReplicaSet of a Deployment: the old ones and, if it
// exists yet, the new one.
func withNew(old []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	all := append([]*appsv1.ReplicaSet(nil), old...)
	if newRS != nil {
		all = append(all, newRS)
	}
	return all
}

// syncRevision: a template used again (kubectl rollout undo) becomes the
// newest revision. minReadySeconds, which is in the Deployment's spec but
// not in its template, is copied along, as Kubernetes does.
func (c *Controller) syncRevision(ctx context.Context, d *appsv1.Deployment, rs *appsv1.ReplicaSet, old []*appsv1.ReplicaSet) error {
	oldRevision := revisionOf(rs) <= maxRevision(old)
	if !oldRevision && rs.Spec.MinReadySeconds == d.Spec.MinReadySeconds {
		return nil
	}
	next := rs.DeepCopy()
	next.Spec.MinReadySeconds = d.Spec.MinReadySeconds
	if oldRevision {
		if next.Annotations == nil {
			next.Annotations = map[string]string{}
		}
		next.Annotations[revisionAnnotation] = strconv.FormatInt(maxRevision(old)+1, 10)
	}
	// rs is sync's private copy: it takes the server's answer, so that
	// the scaling that follows carries the new resourceVersion and the
	// Deployment's status gets the new revision number.
	if err := c.updateReplicaSet(ctx, next); err != nil {
		return err
	}
	if oldRevision {
		c.log.Info("the template came back: its replicaset becomes the newest revision", "deployment", client.KeyOf(d),
			"replicaset", rs.Name, "revision", next.Annotations[revisionAnnotation])
	}
	*rs = *next
	return nil
}

func revisionOf(rs *appsv1.ReplicaSet) int64 {
	n, _ := strconv.ParseInt(rs.Annotations[revisionAnnotation], 10, 64)
	return n
}

func maxRevision(rsets []*appsv1.ReplicaSet) int64 {
	var m int64
	for _, rs := range rsets {
		m = max(m, revisionOf(rs))
	}
	return m
}

// sortOldestFirst orders ReplicaSets by creation time, then name, as
// Kubernetes' ReplicaSetsByCreationTimestamp: old ReplicaSets are scaled
// down oldest first.
func sortOldestFirst(rsets []*appsv1.ReplicaSet) {
	sort.SliceStable(rsets, func(i, j int) bool {
		a, b := rsets[i], rsets[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
}

func withLabel(in map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(in)+1)
	for a, b := range in {
		out[a] = b
	}
	out[k] = v
	return out
}

func ptr[T any](v T) *T { return &v }

func ptrValue(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
