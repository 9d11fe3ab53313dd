package garbagecollector

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/client"
)

// sync handles one object: first as an owner being deleted with a
// finalizer, then as a dependent whose owners may be gone.
func (gc *Collector) sync(ctx context.Context, it item) error {
	mon := gc.monitored[it.resource]
	obj, ok := mon.informer.Cache().Get(it.key)
	if !ok {
		return nil // gone already
	}
	m, _ := meta.Accessor(obj)
	if m.GetDeletionTimestamp() != nil {
		switch pendingFinalizer(m) {
		case metav1.FinalizerOrphanDependents:
			return gc.orphanDependents(ctx, mon, obj)
		case metav1.FinalizerDeleteDependents:
			return gc.deleteDependentsFirst(ctx, mon, obj)
		}
	}
	return gc.deleteIfOrphaned(ctx, mon, obj)
}

// pendingFinalizer is the deletion finalizer this controller must act on.
func pendingFinalizer(m metav1.Object) string {
	for _, f := range m.GetFinalizers() {
		if f == metav1.FinalizerOrphanDependents || f == metav1.FinalizerDeleteDependents {
			return f
		}
	}
	return ""
}

// deleteIfOrphaned deletes obj if none of its owners exists any more. An
// owner that is missing from our caches is checked with the API server
// before anything is deleted: the cache may simply not have seen it yet.
func (gc *Collector) deleteIfOrphaned(ctx context.Context, mon *monitor, obj runtime.Object) error {
	m, _ := meta.Accessor(obj)
	refs := m.GetOwnerReferences()
	if len(refs) == 0 {
		return nil
	}
	if m.GetDeletionTimestamp() != nil {
		return nil // already on its way out: a one-way trip (attemptToDeleteItem)
	}
	foreground, solid := false, false
	var drop []types.UID // owners gone, or waiting for their dependents
	for _, ref := range refs {
		state, err := gc.ownerState(ctx, m.GetNamespace(), ref, false)
		if err != nil {
			return err
		}
		switch state {
		case ownerPresent:
			solid = true
		case ownerAbsent:
			drop = append(drop, ref.UID)
		case ownerDeletingForeground:
			// A foreground deletion deletes every dependent before the
			// owner. One that blocks the owner's deletion goes in the
			// foreground too, so that the owner also waits for its own
			// dependents; the others go in the background.
			drop = append(drop, ref.UID)
			foreground = foreground || (ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion)
		}
	}
	if solid {
		// An owner that exists keeps the object (Kubernetes'
		// attemptToDeleteItem); its references to owners that are gone,
		// or that wait for their dependents to go, are removed: such an
		// owner would otherwise wait for it forever.
		if len(drop) == 0 {
			return nil
		}
		err := gc.dropOwnerRefs(ctx, mon.res, obj, drop...)
		if apierrors.IsConflict(err) {
			return nil // changed since: its event brings it back
		}
		if err != nil {
			return fmt.Errorf("drop the gone or deleting owners of %s %s: %w", mon.res.Name, client.KeyOf(obj), err)
		}
		gc.log.Info("removed references to owners gone or deleting; another owner keeps the object", "resource", mon.res.Name,
			"object", client.KeyOf(obj), "owners", drop)
		return nil
	}
	policy := metav1.DeletePropagationBackground
	if foreground {
		policy = metav1.DeletePropagationForeground // the owner waits for our whole subtree
	}
	if foreground && gc.hasDependentDeletingForeground(m.GetUID()) {
		// Kubernetes' cycle breaking (attemptToDeleteItem): owners that
		// own each other in a circle (pod1 owns pod2 owns pod3 owns pod1)
		// would each wait, in the foreground, for the next one forever.
		// An object whose owner waits for it and whose own dependent
		// already waits for its dependents stops blocking its owners
		// first; its owner can then go, and the circle unwinds.
		unblocked, err := gc.unblockOwnerRefs(ctx, mon.res, obj)
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil // changed or gone: its event brings it back
		}
		if err != nil {
			return fmt.Errorf("unblock the owners of %s %s: %w", mon.res.Name, client.KeyOf(obj), err)
		}
		gc.log.Info("ownerReferences made non-blocking: a dependent is also deleting in the foreground, a possible cycle",
			"resource", mon.res.Name, "object", client.KeyOf(obj))
		m, _ = meta.Accessor(unblocked)
	}
	// Only the object as we judged it: if it changed since (a user, or
	// our own orphaning, removed the ownerReference), the delete is a
	// Conflict and the change's event brings it back to be judged again.
	uid, rv := m.GetUID(), m.GetResourceVersion()
	err := gc.client.Delete(ctx, mon.res, m.GetNamespace(), m.GetName(),
		&metav1.DeleteOptions{PropagationPolicy: &policy, Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
	if apierrors.IsConflict(err) {
		return nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s %s: %w", mon.res.Name, client.KeyOf(obj), err)
	}
	gc.log.Info("deleted dependent whose owners are gone", "resource", mon.res.Name, "object", client.KeyOf(obj), "propagation", policy)
	return nil
}

type ownerStatus int

const (
	ownerAbsent ownerStatus = iota
	ownerPresent
	ownerDeletingForeground
)

// ownerState says whether the owner named by ref exists (with the same
// UID: a new object under an old name is not the owner), from our caches
// or, when they do not have it (or live), from the API server.
func (gc *Collector) ownerState(ctx context.Context, namespace string, ref metav1.OwnerReference, live bool) (ownerStatus, error) {
	res, ok := gc.resourceFor(ref)
	if !ok {
		return ownerPresent, nil // a kind we do not know: never delete on its account
	}
	if !res.Namespaced {
		namespace = ""
	}
	var owner runtime.Object
	if mon, ok := gc.monitored[res.Name]; ok && !live {
		key := ref.Name
		if namespace != "" {
			key = namespace + "/" + ref.Name
		}
		owner, _ = mon.informer.Cache().Get(key)
	}
	if owner == nil {
		live := res.New()
		err := gc.client.Get(ctx, res, namespace, ref.Name, live)
		if apierrors.IsNotFound(err) {
			return ownerAbsent, nil
		}
		if err != nil {
			return ownerPresent, err
		}
		owner = live
	}
	m, _ := meta.Accessor(owner)
	if m.GetUID() != ref.UID && !live {
		// The cache may lag: an owner recreated under its name, whose
		// new object a new dependent names, is asked of the API server.
		return gc.ownerState(ctx, namespace, ref, true)
	}
	if m.GetUID() != ref.UID {
		return ownerAbsent, nil
	}
	if m.GetDeletionTimestamp() != nil && pendingFinalizer(m) == metav1.FinalizerDeleteDependents {
		return ownerDeletingForeground, nil
	}
	return ownerPresent, nil
}

// resourceFor maps an ownerReference's apiVersion and kind to a resource.
func (gc *Collector) resourceFor(ref metav1.OwnerReference) (client.Resource, bool) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return client.Resource{}, false
	}
	for _, mon := range gc.monitored {
		if mon.res.GroupVersion == gv && mon.res.Kind == ref.Kind {
			return mon.res, true
		}
	}
	return client.Resource{}, false
}

// orphanDependents removes the owner from its dependents' ownerReferences,
// then lets the owner go by removing the orphan finalizer. The dependents
// are listed from the API server, not from our caches: a pod created an
// instant before the deletion may not be in them yet, and keeping its
// reference to an owner about to be gone would get it collected as
// garbage, the opposite of what the user asked.
func (gc *Collector) orphanDependents(ctx context.Context, mon *monitor, owner runtime.Object) error {
	om, _ := meta.Accessor(owner)
	for _, dmon := range gc.monitored {
		if !dmon.res.Namespaced && om.GetNamespace() != "" {
			continue // a namespaced owner owns only namespaced objects
		}
		list := dmon.res.NewList()
		if err := gc.client.List(ctx, dmon.res, om.GetNamespace(), client.ListOptions{}, list); err != nil {
			return fmt.Errorf("list %s: %w", dmon.res.Name, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return err
		}
		for _, obj := range items {
			dm, _ := meta.Accessor(obj)
			if !slices.ContainsFunc(dm.GetOwnerReferences(), func(r metav1.OwnerReference) bool { return r.UID == om.GetUID() }) {
				continue
			}
			if err := gc.dropOwnerRefs(ctx, dmon.res, obj, om.GetUID()); err != nil {
				return err
			}
			gc.log.Info("orphaned dependent", "owner", client.KeyOf(owner), "resource", dmon.res.Name, "object", client.KeyOf(obj))
		}
	}
	return gc.removeFinalizer(ctx, mon.res, owner, metav1.FinalizerOrphanDependents)
}

// deleteDependentsFirst deletes the owner's dependents; once none is left
// the foregroundDeletion finalizer goes and the owner with it.
func (gc *Collector) deleteDependentsFirst(ctx context.Context, mon *monitor, owner runtime.Object) error {
	om, _ := meta.Accessor(owner)
	blocking := 0
	for _, dep := range gc.dependents(string(om.GetUID())) {
		dmon := gc.monitored[dep.resource]
		obj, ok := dmon.informer.Cache().Get(dep.key)
		if !ok {
			continue
		}
		if blocksOwner(obj, om.GetUID()) {
			blocking++
		}
		if err := gc.deleteIfOrphaned(ctx, dmon, obj); err != nil {
			return err
		}
	}
	// Only the dependents with blockOwnerDeletion keep the owner
	// (processDeletingDependentsItem); the others are deleted all the same.
	if blocking == 0 {
		return gc.removeFinalizer(ctx, mon.res, owner, metav1.FinalizerDeleteDependents)
	}
	// Each dependent's DELETED event, or its reference ceasing to block,
	// requeues this owner (ownerDeleted, ownersChanged), so there is
	// nothing to retry: the last one finishes the deletion.
	gc.log.Info("waiting for dependents to be deleted", "resource", mon.res.Name, "object", client.KeyOf(owner), "dependents", blocking)
	return nil
}

// blocksOwner: obj's reference to the owner uid has blockOwnerDeletion.
func blocksOwner(obj runtime.Object, uid types.UID) bool {
	m, _ := meta.Accessor(obj)
	return slices.ContainsFunc(m.GetOwnerReferences(), func(r metav1.OwnerReference) bool {
		return r.UID == uid && r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion
	})
}

// hasDependentDeletingForeground: one of the objects uid owns is itself
// waiting for its dependents.
func (gc *Collector) hasDependentDeletingForeground(uid types.UID) bool {
	for _, dep := range gc.dependents(string(uid)) {
		if obj, ok := gc.monitored[dep.resource].informer.Cache().Get(dep.key); ok {
			m, _ := meta.Accessor(obj)
			if m.GetDeletionTimestamp() != nil && pendingFinalizer(m) == metav1.FinalizerDeleteDependents {
				return true
			}
		}
	}
	return false
}

// unblockOwnerRefs sets blockOwnerDeletion to false in each of obj's
// ownerReferences that has it (unblockOwnerReferences), and returns obj
// as stored.
func (gc *Collector) unblockOwnerRefs(ctx context.Context, res client.Resource, obj runtime.Object) (runtime.Object, error) {
	fresh := obj.DeepCopyObject()
	m, _ := meta.Accessor(fresh)
	refs := m.GetOwnerReferences()
	for i := range refs {
		if refs[i].BlockOwnerDeletion != nil && *refs[i].BlockOwnerDeletion {
			refs[i].BlockOwnerDeletion = new(bool)
		}
	}
	m.SetOwnerReferences(refs)
	return fresh, gc.client.Update(ctx, res, m.GetNamespace(), m.GetName(), fresh, fresh)
}

// dropOwnerRefs removes the references to uids from obj's
// ownerReferences. A conflict (obj changed since it was read) is
// returned, and the object or its owner is synced again.
func (gc *Collector) dropOwnerRefs(ctx context.Context, res client.Resource, obj runtime.Object, uids ...types.UID) error {
	fresh := obj.DeepCopyObject()
	m, _ := meta.Accessor(fresh)
	var keep []metav1.OwnerReference
	for _, r := range m.GetOwnerReferences() {
		if !slices.Contains(uids, r.UID) {
			keep = append(keep, r)
		}
	}
	m.SetOwnerReferences(keep)
	err := gc.client.Update(ctx, res, m.GetNamespace(), m.GetName(), fresh, nil)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (gc *Collector) removeFinalizer(ctx context.Context, res client.Resource, owner runtime.Object, finalizer string) error {
	fresh := owner.DeepCopyObject()
	m, _ := meta.Accessor(fresh)
	var keep []string
	for _, f := range m.GetFinalizers() {
		if f != finalizer {
			keep = append(keep, f)
		}
	}
	m.SetFinalizers(keep)
	err := gc.client.Update(ctx, res, m.GetNamespace(), m.GetName(), fresh, nil)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		gc.log.Info("removed finalizer", "finalizer", finalizer, "resource", res.Name, "object", client.KeyOf(owner))
	}
	return err
}
