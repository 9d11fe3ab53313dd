package deployment

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/client"
)

var deploymentKind = appsv1.SchemeGroupVersion.WithKind("Deployment")

// claimReplicaSets is Kubernetes' ClaimReplicaSets: the ReplicaSets a
// Deployment controls are those whose controller ownerReference it is; an
// orphan ReplicaSet whose labels its selector matches is adopted (a
// ReplicaSet made by hand, then put under a Deployment, is rolled over by
// it as its old one), and an owned one that no longer matches is
// released. A Deployment being deleted adopts nothing.
func (c *Controller) claimReplicaSets(ctx context.Context, d *appsv1.Deployment) ([]*appsv1.ReplicaSet, error) {
	owned := c.ownedReplicaSets(d)
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || sel.Empty() || d.DeletionTimestamp != nil {
		return owned, nil // an invalid or empty selector selects nothing to adopt (validation refuses both)
	}
	kept := owned[:0]
	for _, rs := range owned {
		if sel.Matches(labels.Set(rs.Labels)) {
			kept = append(kept, rs)
			continue
		}
		if err := c.setOwners(ctx, rs, withoutOwner(rs.OwnerReferences, d.UID)); err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
		c.log.Info("released ReplicaSet that no longer matches the selector", "deployment", client.KeyOf(d), "replicaset", client.KeyOf(rs))
	}
	for _, obj := range c.rsets.Cache().ByIndex(client.IndexByNamespace, d.Namespace) {
		rs := obj.(*appsv1.ReplicaSet)
		if metav1.GetControllerOf(rs) != nil || rs.DeletionTimestamp != nil || !sel.Matches(labels.Set(rs.Labels)) {
			continue
		}
		adopted := rs.DeepCopy()
		adopted.OwnerReferences = append(adopted.OwnerReferences, *metav1.NewControllerRef(d, deploymentKind))
		if err := c.setOwners(ctx, adopted, adopted.OwnerReferences); apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return nil, err
		}
		c.log.Info("adopted orphan ReplicaSet", "deployment", client.KeyOf(d), "replicaset", client.KeyOf(rs))
		kept = append(kept, adopted)
	}
	sortOldestFirst(kept)
	return kept, nil
}

func withoutOwner(refs []metav1.OwnerReference, uid types.UID) []metav1.OwnerReference {
	var out []metav1.OwnerReference
	for _, r := range refs {
		if r.UID != uid {
			out = append(out, r)
		}
	}
	return out
}

// setOwners replaces the ReplicaSet's ownerReferences with a merge patch
// that carries its resourceVersion, so that an ownership change made
// meanwhile by somebody else is a 409, not overwritten; rs gets the new
// resourceVersion.
func (c *Controller) setOwners(ctx context.Context, rs *appsv1.ReplicaSet, refs []metav1.OwnerReference) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": refs, "resourceVersion": rs.ResourceVersion}})
	if err != nil {
		return err
	}
	out := &appsv1.ReplicaSet{}
	if err := c.client.Patch(ctx, client.ReplicaSets, rs.Namespace, rs.Name, types.MergePatchType, patch, out); err != nil {
		return fmt.Errorf("patch owners of %s: %w", client.KeyOf(rs), err)
	}
	rs.ResourceVersion = out.ResourceVersion
	return nil
}
