package deployment

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
)

// This file holds the controller's writes to ReplicaSets: create one for a
// new template, resize one, delete history beyond the limit. The
// strategies decide; these functions act.

// scaling is one resize a strategy decided on: rs goes to replicas "to".
// why is the rule that allowed it, in words, for the log.
type scaling struct {
	rs  *appsv1.ReplicaSet
	to  int32
	why string
}

// apply performs a strategy's scalings in order. A ReplicaSet may appear
// twice (Kubernetes first removes an old ReplicaSet's unavailable pods,
// then its available ones), and each write sees the result of the one
// before it.
func (c *Controller) apply(ctx context.Context, d *appsv1.Deployment, plan []scaling) error {
	for _, s := range plan {
		if err := c.scale(ctx, d, s.rs, s.to, s.why); err != nil {
			return err
		}
	}
	return nil
}

// scale sets a ReplicaSet's spec.replicas and the desired-replicas and
// max-replicas annotations (proportional scaling reads them), with
// Kubernetes' ScalingReplicaSet event when the size changes. It writes
// with the resourceVersion sync read, as Kubernetes' Update does: if the
// cache was behind, the write is a Conflict and the sync is retried on
// fresher data, rather than sizing a ReplicaSet from a stale picture.
// rs, sync's private copy, takes the server's answer.
func (c *Controller) scale(ctx context.Context, d *appsv1.Deployment, rs *appsv1.ReplicaSet, replicas int32, why string) error {
	from := *rs.Spec.Replicas
	next := rs.DeepCopy()
	next.Spec.Replicas = &replicas
	setReplicaAnnotations(next, d)
	if from == replicas && next.Annotations[desiredReplicasAnnotation] == rs.Annotations[desiredReplicasAnnotation] &&
		next.Annotations[maxReplicasAnnotation] == rs.Annotations[maxReplicasAnnotation] {
		return nil
	}
	if err := c.updateReplicaSet(ctx, next); err != nil {
		return err
	}
	*rs = *next
	if from == replicas {
		return nil // only the annotations changed: no event, as in Kubernetes
	}
	dir := "up"
	if replicas < from {
		dir = "down"
	}
	c.log.Info("scaled replicaset", "deployment", client.KeyOf(d), "replicaset", rs.Name, "from", from, "to", replicas, "why", why)
	c.rec.Event(d, corev1.EventTypeNormal, ReasonScalingReplicaSet, "Scaled %s replica set %s from %d to %d", dir, rs.Name, from, replicas)
	return nil
}

// updateReplicaSet PUTs rs, with its resourceVersion as precondition, and
// replaces it with what the server stored.
func (c *Controller) updateReplicaSet(ctx context.Context, rs *appsv1.ReplicaSet) error {
	if rs.APIVersion == "" {
		rs.APIVersion, rs.Kind = "apps/v1", "ReplicaSet"
	}
	out := &appsv1.ReplicaSet{}
	if err := c.client.Update(ctx, client.ReplicaSets, rs.Namespace, rs.Name, rs, out); err != nil {
		return fmt.Errorf("update replicaset %s: %w", client.KeyOf(rs), err)
	}
	*rs = *out
	return nil
}

// createReplicaSet creates the ReplicaSet for d's current template, with
// zero replicas: the strategy grows it, and its event says so.
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

// cleanupHistory deletes the oldest scaled-down ReplicaSets beyond
// spec.revisionHistoryLimit. Only idle ones count and go: scaled to zero,
// no pods left, and their status describing that spec (observedGeneration),
// so a ReplicaSet whose pods are still being deleted is kept.
func (c *Controller) cleanupHistory(ctx context.Context, d *appsv1.Deployment, old []*appsv1.ReplicaSet) error {
	if d.Spec.RevisionHistoryLimit == nil {
		return nil // no limit: keep every revision
	}
	limit := max(0, int(*d.Spec.RevisionHistoryLimit)) // validation forbids < 0; a stored one must not panic
	var idle []*appsv1.ReplicaSet
	for _, rs := range old {
		if *rs.Spec.Replicas == 0 && rs.Status.Replicas == 0 && rs.Status.ObservedGeneration >= rs.Generation && rs.DeletionTimestamp == nil {
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

// setReplicaAnnotations records on a ReplicaSet the Deployment's size when
// the ReplicaSet was last scaled: desired-replicas is spec.replicas,
// max-replicas is spec.replicas + maxSurge. A later change of
// spec.replicas is detected, and shared out in proportion, from them.
func setReplicaAnnotations(rs *appsv1.ReplicaSet, d *appsv1.Deployment) {
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	rs.Annotations[desiredReplicasAnnotation] = strconv.Itoa(int(*d.Spec.Replicas))
	rs.Annotations[maxReplicasAnnotation] = strconv.Itoa(int(*d.Spec.Replicas + maxSurge(d)))
}

// replicaAnnotation reads desired-replicas or max-replicas.
func replicaAnnotation(rs *appsv1.ReplicaSet, key string) (int32, bool) {
	n, err := strconv.ParseInt(rs.Annotations[key], 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}

// specReplicas sums spec.replicas: the pods the ReplicaSets ask for.
func specReplicas(rsets []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rsets {
		n += *rs.Spec.Replicas
	}
	return n
}

// active are the ReplicaSets asking for pods at all.
func active(rsets []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range rsets {
		if rs != nil && *rs.Spec.Replicas > 0 {
			out = append(out, rs)
		}
	}
	return out
}
