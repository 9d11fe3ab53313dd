package history

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/client"
)

// maxCollisions bounds Create's renaming: each collision is a different
// template whose name hash is equal to ours, which FNV-32 makes rare, so
// more than a few in a row means something else is wrong.
const maxCollisions = 10

// History reads a controller's revisions from the shared
// ControllerRevision informer's cache and writes them through the API, as
// Kubernetes' realHistory. Cached revisions are shared: never modify one.
type History struct {
	client    *client.Client
	revisions *client.Informer
}

// NewHistory is the history kept through c, read from revisions (the
// shared ControllerRevision informer); it indexes that cache by owner and
// namespace, so call it before the informer runs.
func NewHistory(c *client.Client, revisions *client.Informer) *History {
	revisions.Cache().AddIndex(client.IndexByNamespace, client.NamespaceIndex)
	return &History{client: c, revisions: revisions}
}

// Claim returns the revisions parent controls, after Kubernetes'
// ControllerRefManager rules (ClaimControllerRevisions): a revision whose
// controller ownerReference is parent is kept if the selector still
// matches its labels and released (its ownerReference removed) if not;
// an orphan the selector matches is adopted, but only if canAdopt (a
// fresh read of parent, not being deleted) says so, once, before the
// first adoption. A parent being deleted adopts and releases nothing.
func (h *History) Claim(ctx context.Context, parent metav1.Object, kind schema.GroupVersionKind, sel labels.Selector,
	canAdopt func(context.Context) error) ([]*appsv1.ControllerRevision, error) {
	var owned []*appsv1.ControllerRevision
	adoptChecked := false
	for _, obj := range h.revisions.Cache().ByIndex(client.IndexByNamespace, parent.GetNamespace()) {
		rev := obj.(*appsv1.ControllerRevision)
		ref := metav1.GetControllerOf(rev)
		matches := sel.Matches(labels.Set(rev.Labels))
		switch {
		case ref != nil && ref.UID == parent.GetUID():
			if matches {
				owned = append(owned, rev)
				continue
			}
			if parent.GetDeletionTimestamp() != nil {
				continue // not ours to count, nor to release while going away
			}
			if err := h.Release(ctx, parent, rev); err != nil {
				return nil, err
			}
		case ref == nil && matches && rev.DeletionTimestamp == nil && parent.GetDeletionTimestamp() == nil && !sel.Empty():
			if !adoptChecked {
				if err := canAdopt(ctx); err != nil {
					return nil, fmt.Errorf("can't adopt ControllerRevisions: %w", err)
				}
				adoptChecked = true
			}
			adopted, err := h.Adopt(ctx, parent, kind, rev)
			if apierrors.IsNotFound(err) {
				continue // gone meanwhile: nothing to own
			}
			if err != nil {
				return nil, err
			}
			owned = append(owned, adopted)
		}
	}
	return owned, nil
}

// Create creates rev (New's result) owned by parent. If its name is taken
// by a revision with other data — a hash collision — it bumps
// *collisionCount, renames rev with the new hash and tries again, as
// Kubernetes' CreateControllerRevision; the caller persists the count
// (status.collisionCount) so the next sync computes the same names; a
// HashLabel on rev is rewritten with the name's new hash. If
// the name is taken by an equal revision (our own earlier create, not yet
// in the cache), that revision is returned.
func (h *History) Create(ctx context.Context, parent metav1.Object, rev *appsv1.ControllerRevision, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	if collisionCount == nil {
		return nil, errors.New("create controller revision: collisionCount must not be nil")
	}
	clone := rev.DeepCopy()
	clone.Namespace = parent.GetNamespace()
	for range maxCollisions {
		hash := Hash(rev, collisionCount)
		clone.Name = Name(parent.GetName(), hash)
		if _, ok := clone.Labels[HashLabel]; ok {
			clone.Labels[HashLabel] = hash
		}
		created := &appsv1.ControllerRevision{}
		err := h.client.Create(ctx, client.ControllerRevisions, clone.Namespace, clone, created)
		if err == nil {
			return created, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create controller revision %s/%s: %w", clone.Namespace, clone.Name, err)
		}
		exists := &appsv1.ControllerRevision{}
		if err := h.client.Get(ctx, client.ControllerRevisions, clone.Namespace, clone.Name, exists); err != nil {
			return nil, fmt.Errorf("get controller revision %s/%s: %w", clone.Namespace, clone.Name, err)
		}
		if Equal(exists, clone) {
			return exists, nil
		}
		*collisionCount++
	}
	return nil, fmt.Errorf("create controller revision for %s: %d hash collisions in a row", parent.GetName(), maxCollisions)
}

// UpdateRevision renumbers rev, when an old template becomes current
// again (a rollback): its snapshot is kept, its number becomes the newest.
// A conflict is retried on a fresh copy.
func (h *History) UpdateRevision(ctx context.Context, rev *appsv1.ControllerRevision, revision int64) (*appsv1.ControllerRevision, error) {
	clone := rev.DeepCopy()
	for attempt := 0; ; attempt++ {
		if clone.Revision == revision {
			return clone, nil
		}
		clone.Revision = revision
		out := &appsv1.ControllerRevision{}
		err := h.client.Update(ctx, client.ControllerRevisions, clone.Namespace, clone.Name, clone, out)
		if err == nil {
			return out, nil
		}
		if !apierrors.IsConflict(err) || attempt >= 3 {
			return nil, fmt.Errorf("update controller revision %s/%s: %w", clone.Namespace, clone.Name, err)
		}
		if err := h.client.Get(ctx, client.ControllerRevisions, clone.Namespace, clone.Name, out); err != nil {
			return nil, fmt.Errorf("get controller revision %s/%s: %w", clone.Namespace, clone.Name, err)
		}
		clone = out
	}
}

// Delete deletes rev; a revision already gone is no error.
func (h *History) Delete(ctx context.Context, rev *appsv1.ControllerRevision) error {
	err := h.client.Delete(ctx, client.ControllerRevisions, rev.Namespace, rev.Name, nil)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete controller revision %s/%s: %w", rev.Namespace, rev.Name, err)
	}
	return nil
}

// Adopt makes parent the controller of an orphan revision.
func (h *History) Adopt(ctx context.Context, parent metav1.Object, kind schema.GroupVersionKind, rev *appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	if owner := metav1.GetControllerOf(rev); owner != nil {
		return nil, fmt.Errorf("attempt to adopt revision %s owned by %s %s", rev.Name, owner.Kind, owner.Name)
	}
	refs := append(append([]metav1.OwnerReference(nil), rev.OwnerReferences...), *metav1.NewControllerRef(parent, kind))
	return h.patchOwners(ctx, rev, refs)
}

// Release removes parent from the revision's owners. A revision gone
// meanwhile is no error.
func (h *History) Release(ctx context.Context, parent metav1.Object, rev *appsv1.ControllerRevision) error {
	var refs []metav1.OwnerReference
	for _, r := range rev.OwnerReferences {
		if r.UID != parent.GetUID() {
			refs = append(refs, r)
		}
	}
	_, err := h.patchOwners(ctx, rev, refs)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// patchOwners replaces the revision's ownerReferences with a merge patch
// carrying its uid and resourceVersion, so it fails rather than overwrite
// a change made meanwhile (or touch a new revision of the same name).
func (h *History) patchOwners(ctx context.Context, rev *appsv1.ControllerRevision, refs []metav1.OwnerReference) (*appsv1.ControllerRevision, error) {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"ownerReferences": refs, "uid": rev.UID, "resourceVersion": rev.ResourceVersion}})
	if err != nil {
		return nil, err
	}
	out := &appsv1.ControllerRevision{}
	if err := h.client.Patch(ctx, client.ControllerRevisions, rev.Namespace, rev.Name, types.MergePatchType, patch, out); err != nil {
		return nil, fmt.Errorf("patch owners of controller revision %s/%s: %w", rev.Namespace, rev.Name, err)
	}
	return out, nil
}
