package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/client"
)

// PodClaim is Kubernetes' PodControllerRefManager: it decides which pods
// an owner (a ReplicaSet, a DaemonSet, a StatefulSet, a Job) controls.
//
//   - A pod is the owner's when its controller ownerReference has the
//     owner's UID.
//   - An owned pod that no longer matches is released: its ownerReference
//     removed (`kubectl label pod x app-` takes a pod out of a ReplicaSet,
//     which then makes a replacement).
//   - An orphan that matches is adopted: the owner becomes its controller.
//
// An owner being deleted releases and adopts nothing. The pods come from
// Pods, the shared pod informer's cache, indexed by owner UID and by
// namespace (client.IndexByOwnerUID, client.IndexByNamespace).
type PodClaim struct {
	Client *client.Client
	Pods   *client.Cache
	Owner  Object
	Kind   schema.GroupVersionKind
	// Selector is the owner's; an empty one adopts nothing.
	Selector labels.Selector
	// Member, if set, is one more condition a pod must meet (a
	// StatefulSet's pods are named <set>-<ordinal>).
	Member func(*corev1.Pod) bool
	// CanAdopt, if set, is asked once before the first adoption
	// (RecheckDeletion).
	CanAdopt func(context.Context) error
	// Finalizers are added to an adopted pod (the Job's tracking finalizer).
	Finalizers []string
	Log        *slog.Logger
}

// Claim returns the owner's pods, after releasing and adopting. The pods
// are the cache's (or the server's answer to an adoption): read them,
// never change them.
func (p PodClaim) Claim(ctx context.Context) ([]*corev1.Pod, error) {
	deleting := p.Owner.GetDeletionTimestamp() != nil
	var owned []*corev1.Pod
	for _, obj := range p.Pods.ByIndex(client.IndexByOwnerUID, string(p.Owner.GetUID())) {
		pod := obj.(*corev1.Pod)
		if ref := metav1.GetControllerOf(pod); ref == nil || ref.UID != p.Owner.GetUID() {
			continue
		}
		switch {
		case p.matches(pod):
			owned = append(owned, pod)
		case !deleting:
			if err := p.release(ctx, pod); err != nil {
				return nil, err
			}
		}
	}
	if deleting || p.Selector.Empty() {
		return owned, nil
	}
	checked := false
	for _, obj := range p.Pods.ByIndex(client.IndexByNamespace, p.Owner.GetNamespace()) {
		pod := obj.(*corev1.Pod)
		if metav1.GetControllerOf(pod) != nil || pod.DeletionTimestamp != nil || !p.matches(pod) {
			continue
		}
		if !checked && p.CanAdopt != nil {
			if err := p.CanAdopt(ctx); err != nil {
				return nil, fmt.Errorf("can't adopt pod %s: %w", client.KeyOf(pod), err)
			}
		}
		checked = true
		adopted, err := p.adopt(ctx, pod)
		if apierrors.IsNotFound(err) {
			continue // gone meanwhile: nothing to own
		}
		if err != nil {
			return nil, err
		}
		owned = append(owned, adopted)
	}
	return owned, nil
}

func (p PodClaim) matches(pod *corev1.Pod) bool {
	return p.Selector.Matches(labels.Set(pod.Labels)) && (p.Member == nil || p.Member(pod))
}

// adopt adds the owner as the pod's controller (and the finalizers).
func (p PodClaim) adopt(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	refs := append(slices.Clone(pod.OwnerReferences), *metav1.NewControllerRef(p.Owner, p.Kind))
	finalizers := slices.Clone(pod.Finalizers)
	for _, f := range p.Finalizers {
		if !slices.Contains(finalizers, f) {
			finalizers = append(finalizers, f)
		}
	}
	out, err := p.patchOwners(ctx, pod, refs, finalizers)
	if err == nil {
		p.Log.Info("adopted orphan pod", p.kindKey(), client.KeyOf(p.Owner), "pod", client.KeyOf(pod))
	}
	return out, err
}

// release removes the owner from the pod's owners.
func (p PodClaim) release(ctx context.Context, pod *corev1.Pod) error {
	refs := slices.DeleteFunc(slices.Clone(pod.OwnerReferences), func(r metav1.OwnerReference) bool { return r.UID == p.Owner.GetUID() })
	_, err := p.patchOwners(ctx, pod, refs, pod.Finalizers)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		p.Log.Info("released pod that no longer matches", p.kindKey(), client.KeyOf(p.Owner), "pod", client.KeyOf(pod))
	}
	return err
}

// patchOwners replaces the pod's ownerReferences (and finalizers) with a
// merge patch that carries its uid and resourceVersion, so it fails (409)
// rather than overwrite an ownership change made meanwhile, or take a new
// pod of the same name.
func (p PodClaim) patchOwners(ctx context.Context, pod *corev1.Pod, refs []metav1.OwnerReference, finalizers []string) (*corev1.Pod, error) {
	meta := map[string]any{"ownerReferences": refs, "uid": pod.UID, "resourceVersion": pod.ResourceVersion}
	if !slices.Equal(finalizers, pod.Finalizers) {
		meta["finalizers"] = finalizers
	}
	patch, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return nil, err
	}
	out := &corev1.Pod{}
	if err := p.Client.Patch(ctx, client.Pods, pod.Namespace, pod.Name, types.MergePatchType, patch, out); err != nil {
		return nil, fmt.Errorf("patch owners of %s: %w", client.KeyOf(pod), err)
	}
	return out, nil
}

// kindKey is the owner's log key: "replicaset", "job".
func (p PodClaim) kindKey() string { return strings.ToLower(p.Kind.Kind) }

// Object is an API object: its metadata and its kind.
type Object interface {
	metav1.Object
	runtime.Object
}

// RecheckDeletion is Kubernetes' RecheckDeletionTimestamp, a PodClaim's
// CanAdopt: a fresh read of the owner from the server (not the cache)
// says it still exists, is the same object, and is not being deleted. One
// being deleted, or deleted and made anew under the same name, must take
// no pod the garbage collector would then have to chase.
func RecheckDeletion(c *client.Client, r client.Resource, owner Object) func(context.Context) error {
	return func(ctx context.Context) error {
		fresh := &metav1.PartialObjectMetadata{}
		if err := c.Get(ctx, r, owner.GetNamespace(), owner.GetName(), fresh); err != nil {
			return err
		}
		if fresh.UID != owner.GetUID() {
			return fmt.Errorf("original %s %s is gone: got uid %s, wanted %s", r.Kind, client.KeyOf(owner), fresh.UID, owner.GetUID())
		}
		if fresh.DeletionTimestamp != nil {
			return fmt.Errorf("%s has just been deleted at %v", client.KeyOf(owner), fresh.DeletionTimestamp)
		}
		return nil
	}
}
