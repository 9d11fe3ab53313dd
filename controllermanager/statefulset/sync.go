package statefulset

import (
	"context"
	"errors"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/controllermanager/history"
)

// sync brings one set a step closer to its spec (the package doc's four
// steps). A returned error requeues the key with backoff; the retry plans
// again from the cache of then.
func (c *Controller) sync(ctx context.Context, key string) error {
	obj, ok := c.sets.Cache().Get(key)
	if !ok {
		// Deleted: the garbage collector removes its pods, revisions and
		// the claims whenDeleted=Delete gave it.
		c.exp.forget(key)
		return nil
	}
	// The cache's set is shared: sync works on a copy, which names its
	// kind for the events and ownerReferences it goes into.
	set := obj.(*appsv1.StatefulSet).DeepCopy()
	set.APIVersion, set.Kind = controllerKind.GroupVersion().String(), controllerKind.Kind
	sel, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil {
		c.log.Error("invalid selector, not retrying", "statefulset", key, "err", err)
		return nil // retrying cannot fix it; an update of the set requeues it
	}
	if podKey := c.exp.pending(key, c.cachedPod); podKey != "" {
		// Absorbed: the watch event of our write to podKey is on its way,
		// and requeues the set when it arrives.
		c.log.Debug("waiting for the pod cache to see our own write", "statefulset", key, "pod", podKey)
		return nil
	}
	revs, err := c.history.Claim(ctx, set, controllerKind, sel, c.canAdopt(set))
	if err != nil {
		return err // retried: the claim is read again from the cache
	}
	history.Sort(revs)
	pods, err := c.claimPods(ctx, set, sel)
	if err != nil {
		return err
	}

	current, update, collisionCount, err := c.revisionsOf(ctx, set, revs)
	if err != nil {
		return err // retried; a new revision's collisionCount is recomputed then
	}
	currentSet, err := applyRevision(set, current)
	if err != nil {
		return err
	}
	updateSet, err := applyRevision(set, update)
	if err != nil {
		return err
	}
	now := c.clock.Now()
	p := planSync(planInput{set: set, currentSet: currentSet, updateSet: updateSet,
		currentRevision: current.Name, updateRevision: update.Name, pods: pods, claim: c.cachedClaim(set.Namespace), now: now})
	if p.waiting != "" {
		c.log.Debug("ordered: waiting", "statefulset", key, "for", p.waiting)
	}
	rolled, execErr := c.execute(ctx, set, updateSet, p)

	// The status is written even when a write failed: it describes the
	// pods as they are, and `kubectl get sts` should say so.
	st := newStatus(set, p, current, update, collisionCount, now)
	for _, pod := range rolled {
		if revisionOf(pod) == current.Name {
			st.CurrentReplicas-- // deleted to be updated: no longer current
		}
	}
	statusErr := c.writeStatus(ctx, set, st)
	c.requeueForAvailability(set, p, now)
	historyErr := c.truncateHistory(ctx, set, pods, revs, current, update)
	return errors.Join(execErr, statusErr, historyErr)
}

// cachedPod reads a pod from the cache by key.
func (c *Controller) cachedPod(key string) (*corev1.Pod, bool) {
	obj, ok := c.pods.Cache().Get(key)
	if !ok {
		return nil, false
	}
	return obj.(*corev1.Pod), true
}

// cachedClaim reads claims of one namespace from the cache.
func (c *Controller) cachedClaim(ns string) func(name string) *corev1.PersistentVolumeClaim {
	return func(name string) *corev1.PersistentVolumeClaim {
		obj, ok := c.claims.Cache().Get(ns + "/" + name)
		if !ok {
			return nil
		}
		return obj.(*corev1.PersistentVolumeClaim)
	}
}

// canAdopt is checked once before a set adopts a pod or a revision.
func (c *Controller) canAdopt(set *appsv1.StatefulSet) func(context.Context) error {
	return controller.RecheckDeletion(c.client, client.StatefulSets, set)
}

// claimPods returns the pods the set controls, after Kubernetes'
// ControllerRefManager rules with one more condition: a pod is the set's
// only if its name is <set>-<ordinal>. An owned pod that fails the
// selector or the name is released; an orphan that passes both is
// adopted (after canAdopt). A set being deleted adopts and releases
// nothing.
func (c *Controller) claimPods(ctx context.Context, set *appsv1.StatefulSet, sel labels.Selector) ([]*corev1.Pod, error) {
	return controller.PodClaim{Client: c.client, Pods: c.pods.Cache(), Owner: set, Kind: controllerKind, Selector: sel,
		Member: func(pod *corev1.Pod) bool { return isMemberOf(set, pod) }, CanAdopt: c.canAdopt(set), Log: c.log}.Claim(ctx)
}
