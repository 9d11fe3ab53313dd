package replicaset

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/client"
)

// claimPods returns the pods the ReplicaSet controls, after Kubernetes'
// ControllerRefManager rules: a pod belongs to the ReplicaSet whose UID is
// its controller ownerReference. An orphan whose labels match the selector
// is adopted; an owned pod whose labels no longer match is released (this
// is how `kubectl label pod x app-` takes a pod out of a ReplicaSet, which
// then creates a replacement).
func (c *Controller) claimPods(ctx context.Context, rs *appsv1.ReplicaSet, sel labels.Selector) ([]*corev1.Pod, error) {
	var owned []*corev1.Pod
	for _, obj := range c.pods.Cache().ByIndex(client.IndexByOwnerUID, string(rs.UID)) {
		pod := obj.(*corev1.Pod)
		if ref := metav1.GetControllerOf(pod); ref == nil || ref.UID != rs.UID {
			continue
		}
		if sel.Matches(labels.Set(pod.Labels)) || rs.DeletionTimestamp != nil {
			owned = append(owned, pod)
			continue
		}
		if err := c.release(ctx, rs, pod); err != nil {
			return nil, err
		}
	}
	if rs.DeletionTimestamp != nil || sel.Empty() {
		return owned, nil // a ReplicaSet being deleted adopts nothing
	}
	for _, obj := range c.pods.Cache().ByIndex(client.IndexByNamespace, rs.Namespace) {
		pod := obj.(*corev1.Pod)
		if metav1.GetControllerOf(pod) != nil || pod.DeletionTimestamp != nil || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		adopted, err := c.adopt(ctx, rs, pod)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		owned = append(owned, adopted)
	}
	return owned, nil
}

// adopt adds the ReplicaSet as the pod's controller.
func (c *Controller) adopt(ctx context.Context, rs *appsv1.ReplicaSet, pod *corev1.Pod) (*corev1.Pod, error) {
	refs := append(append([]metav1.OwnerReference(nil), pod.OwnerReferences...),
		*metav1.NewControllerRef(rs, c.kind.gvk))
	out, err := c.patchOwners(ctx, pod, refs)
	if err == nil {
		c.log.Info("adopted orphan pod", "replicaset", client.KeyOf(rs), "pod", client.KeyOf(pod))
	}
	return out, err
}

// release removes the ReplicaSet from the pod's owners.
func (c *Controller) release(ctx context.Context, rs *appsv1.ReplicaSet, pod *corev1.Pod) error {
	var refs []metav1.OwnerReference
	for _, r := range pod.OwnerReferences {
		if r.UID != rs.UID {
			refs = append(refs, r)
		}
	}
	_, err := c.patchOwners(ctx, pod, refs)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		c.log.Info("released pod that no longer matches the selector", "replicaset", client.KeyOf(rs), "pod", client.KeyOf(pod))
	}
	return err
}

// patchOwners replaces the pod's ownerReferences with a merge patch that
// also carries the pod's resourceVersion, so it fails (409) rather than
// overwrite an ownership change made meanwhile by somebody else.
func (c *Controller) patchOwners(ctx context.Context, pod *corev1.Pod, refs []metav1.OwnerReference) (*corev1.Pod, error) {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"ownerReferences": refs, "resourceVersion": pod.ResourceVersion}})
	if err != nil {
		return nil, err
	}
	out := &corev1.Pod{}
	if err := c.client.Patch(ctx, client.Pods, pod.Namespace, pod.Name, types.MergePatchType, patch, out); err != nil {
		return nil, fmt.Errorf("patch owners of %s: %w", client.KeyOf(pod), err)
	}
	return out, nil
}
