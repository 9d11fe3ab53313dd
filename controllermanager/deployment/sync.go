package deployment

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mkube/mkube/client"
)

// sync brings one Deployment's ReplicaSets in line with its spec.
func (c *Controller) sync(ctx context.Context, key string) error {
	obj, ok := c.deploy.Cache().Get(key)
	if !ok {
		return nil // deleted: the garbage collector removes its ReplicaSets
	}
	d := obj.(*appsv1.Deployment)
	if d.DeletionTimestamp != nil {
		return nil
	}
	owned := c.ownedReplicaSets(d)
	newRS, old := splitByTemplate(d, owned)
	if newRS == nil {
		created, err := c.createReplicaSet(ctx, d, maxRevision(owned)+1)
		if err != nil {
			return err
		}
		newRS = created
	} else if err := c.syncRevision(ctx, d, newRS, old); err != nil {
		return err
	}
	if err := c.scale(ctx, d, newRS, *d.Spec.Replicas); err != nil {
		return err
	}
	for _, rs := range old {
		if err := c.scale(ctx, d, rs, 0); err != nil {
			return err
		}
	}
	if err := c.cleanupHistory(ctx, d, old); err != nil {
		return err
	}
	return c.updateStatus(ctx, d, newRS, append(old, newRS))
}

// ownedReplicaSets are private copies of the ReplicaSets whose controller
// ownerReference is d.
func (c *Controller) ownedReplicaSets(d *appsv1.Deployment) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, obj := range c.rsets.Cache().ByIndex(client.IndexByOwnerUID, string(d.UID)) {
		rs := obj.(*appsv1.ReplicaSet)
		if ref := metav1.GetControllerOf(rs); ref != nil && ref.UID == d.UID {
			out = append(out, rs.DeepCopy()) // sync updates its copies as it writes
		}
	}
	return out
}

// splitByTemplate finds the ReplicaSet running d's current template.
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

// createReplicaSet creates the ReplicaSet for d's current template, with
// zero replicas: scale grows it, and its event says so.
func (c *Controller) createReplicaSet(ctx context.Context, d *appsv1.Deployment, revision int64) (*appsv1.ReplicaSet, error) {
	hash := templateHash(&d.Spec.Template, d.Status.CollisionCount)
	tmpl := d.Spec.Template.DeepCopy()
	tmpl.Labels = withLabel(tmpl.Labels, hashLabel, hash)
	sel := d.Spec.Selector.DeepCopy()
	sel.MatchLabels = withLabel(sel.MatchLabels, hashLabel, hash)
	rs := &appsv1.ReplicaSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{
			Name: d.Name + "-" + hash, Namespace: d.Namespace,
			Labels:          withLabel(d.Spec.Template.Labels, hashLabel, hash),
			Annotations:     map[string]string{revisionAnnotation: strconv.FormatInt(revision, 10)},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))},
		},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr(int32(0)), MinReadySeconds: d.Spec.MinReadySeconds, Selector: sel, Template: *tmpl},
	}
	setReplicaAnnotations(rs, d)
	if err := c.client.Create(ctx, client.ReplicaSets, d.Namespace, rs, rs); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, c.nameTaken(ctx, d, rs.Name)
		}
		return nil, fmt.Errorf("create replicaset for %s: %w", client.KeyOf(d), err)
	}
	c.log.Info("created replicaset for the pod template", "deployment", client.KeyOf(d), "replicaset", rs.Name, "revision", revision)
	return rs, nil
}

// nameTaken handles a ReplicaSet name that already exists. If it is ours,
// the cache is merely behind and a retry finds it. If not, another object
// holds the name our template hashes to: as Kubernetes does, bump
// status.collisionCount, which salts the hash, and retry under a new name.
func (c *Controller) nameTaken(ctx context.Context, d *appsv1.Deployment, name string) error {
	existing := &appsv1.ReplicaSet{}
	if err := c.client.Get(ctx, client.ReplicaSets, d.Namespace, name, existing); err != nil {
		return fmt.Errorf("read replicaset %s: %w", name, err)
	}
	if ref := metav1.GetControllerOf(existing); ref != nil && ref.UID == d.UID {
		return fmt.Errorf("replicaset %s exists but is not in the cache yet", name)
	}
	next := d.DeepCopy()
	next.Status.CollisionCount = ptr(ptrValue(d.Status.CollisionCount) + 1)
	if err := c.client.UpdateStatus(ctx, client.Deployments, d.Namespace, d.Name, next, nil); err != nil {
		return fmt.Errorf("bump collisionCount of %s: %w", client.KeyOf(d), err)
	}
	return fmt.Errorf("replicaset name %s is taken by another object: collisionCount is now %d", name, *next.Status.CollisionCount)
}

func ptrValue(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// syncRevision: a template used again (kubectl rollout undo) becomes the
// newest revision.
func (c *Controller) syncRevision(ctx context.Context, d *appsv1.Deployment, rs *appsv1.ReplicaSet, old []*appsv1.ReplicaSet) error {
	if rev := revisionOf(rs); rev > maxRevision(old) && d.Annotations[revisionAnnotation] == strconv.FormatInt(rev, 10) {
		return nil
	}
	rev := strconv.FormatInt(max(revisionOf(rs), maxRevision(old)+1), 10)
	if err := c.patchReplicaSet(ctx, rs, map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{revisionAnnotation: rev}}}); err != nil {
		return err
	}
	// rs is sync's private copy, and scale patches its annotations back
	// to the server while updateStatus copies its revision to the
	// Deployment: both must see the new number, not bring the old back.
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	rs.Annotations[revisionAnnotation] = rev
	return nil
}

// scale sets a ReplicaSet's spec.replicas, with Kubernetes' event.
func (c *Controller) scale(ctx context.Context, d *appsv1.Deployment, rs *appsv1.ReplicaSet, replicas int32) error {
	if *rs.Spec.Replicas == replicas {
		return nil
	}
	from := *rs.Spec.Replicas
	tmp := rs.DeepCopy()
	setReplicaAnnotations(tmp, d)
	err := c.patchReplicaSet(ctx, rs, map[string]any{
		"metadata": map[string]any{"annotations": tmp.Annotations},
		"spec":     map[string]any{"replicas": replicas}})
	if err != nil {
		return err
	}
	dir := "up"
	if replicas < from {
		dir = "down"
	}
	c.log.Info("scaled replicaset", "deployment", client.KeyOf(d), "replicaset", rs.Name, "from", from, "to", replicas)
	c.rec.Event(d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled %s replica set %s from %d to %d", dir, rs.Name, from, replicas)
	rs.Spec.Replicas = &replicas
	return nil
}

func (c *Controller) patchReplicaSet(ctx context.Context, rs *appsv1.ReplicaSet, patch map[string]any) error {
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	if err := c.client.Patch(ctx, client.ReplicaSets, rs.Namespace, rs.Name, types.MergePatchType, data, nil); err != nil {
		return fmt.Errorf("patch replicaset %s: %w", client.KeyOf(rs), err)
	}
	return nil
}

// cleanupHistory deletes the oldest scaled-down ReplicaSets beyond
// spec.revisionHistoryLimit.
func (c *Controller) cleanupHistory(ctx context.Context, d *appsv1.Deployment, old []*appsv1.ReplicaSet) error {
	limit := int(*d.Spec.RevisionHistoryLimit)
	var idle []*appsv1.ReplicaSet
	for _, rs := range old {
		if *rs.Spec.Replicas == 0 && rs.Status.Replicas == 0 && rs.DeletionTimestamp == nil {
			idle = append(idle, rs)
		}
	}
	if len(idle) <= limit {
		return nil
	}
	sort.Slice(idle, func(i, j int) bool { return revisionOf(idle[i]) < revisionOf(idle[j]) })
	for _, rs := range idle[:len(idle)-limit] {
		err := c.client.Delete(ctx, client.ReplicaSets, rs.Namespace, rs.Name, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &rs.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete old replicaset %s: %w", rs.Name, err)
		}
		c.log.Info("deleted old replicaset beyond revisionHistoryLimit", "deployment", client.KeyOf(d), "replicaset", rs.Name)
	}
	return nil
}

func setReplicaAnnotations(rs *appsv1.ReplicaSet, d *appsv1.Deployment) {
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	rs.Annotations[desiredReplicasAnnotation] = strconv.Itoa(int(*d.Spec.Replicas))
	rs.Annotations[maxReplicasAnnotation] = strconv.Itoa(int(*d.Spec.Replicas) + maxSurge(d))
}

// maxSurge resolves spec.strategy.rollingUpdate.maxSurge (25% by default,
// rounded up, as Kubernetes does).
func maxSurge(d *appsv1.Deployment) int {
	if d.Spec.Strategy.RollingUpdate == nil || d.Spec.Strategy.RollingUpdate.MaxSurge == nil {
		return 0
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(d.Spec.Strategy.RollingUpdate.MaxSurge, int(*d.Spec.Replicas), true)
	if err != nil {
		return 0
	}
	return n
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

func withLabel(in map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(in)+1)
	for a, b := range in {
		out[a] = b
	}
	out[k] = v
	return out
}

func ptr[T any](v T) *T { return &v }
