package daemon

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// sync brings one DaemonSet's pods to its nodes (Kubernetes'
// syncDaemonSet), in the steps of the package comment.
func (c *Controller) sync(ctx context.Context, key string) error {
	obj, ok := c.dsets.Cache().Get(key)
	if !ok {
		// Deleted: the garbage collector deletes its pods and revisions.
		c.exp.Forget(key)
		return nil
	}
	ds := obj.(*appsv1.DaemonSet)
	if equality.Semantic.DeepEqual(ds.Spec.Selector, &metav1.LabelSelector{}) {
		// Validation refuses it since apps/v1; one stored before would
		// claim every pod of the namespace. Not retried: only an update fixes it.
		c.rec.Event(ds, corev1.EventTypeWarning, ReasonSelectingAll, "This daemon set is selecting all pods. A non-empty selector is required.")
		return nil
	}
	if ds.DeletionTimestamp != nil {
		// Going away: its pods and revisions may already be half
		// deleted (the garbage collector does not order them), so no
		// count would be true. Absorbed: the deletion finishes it.
		return nil
	}
	nodes := c.nodeList()

	cur, old, err := c.constructHistory(ctx, ds)
	if err != nil {
		return fmt.Errorf("construct revisions of %s: %w", key, err) // retried
	}
	hash := cur.Labels[hashLabel]

	if !c.exp.Satisfied(key) {
		// Our last creates or deletes have not all come back: the cache
		// is behind, so only count. Their events queue the next sync.
		return c.updateStatus(ctx, ds, nodes, hash, false)
	}
	err = c.manage(ctx, ds, nodes, hash)
	if err == nil && c.exp.Satisfied(key) && ds.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		// Roll only from a cache that shows what manage did (nothing, if
		// satisfied): OnDelete leaves old pods until somebody deletes them.
		err = c.rollingUpdate(ctx, ds, nodes, hash)
	}
	if err == nil {
		if err = c.cleanupHistory(ctx, ds, old); err != nil {
			err = fmt.Errorf("clean up revisions of %s: %w", key, err)
		}
	}
	// The status is written even after a failure, to say what is; the
	// failure is returned and the key retried.
	return errors.Join(err, c.updateStatus(ctx, ds, nodes, hash, true))
}

// nodeList is every node, from the cache.
func (c *Controller) nodeList() []*corev1.Node {
	objs := c.nodes.Cache().List()
	nodes := make([]*corev1.Node, len(objs))
	for i, o := range objs {
		nodes[i] = o.(*corev1.Node)
	}
	return nodes
}
