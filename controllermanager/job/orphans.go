package job

import (
	"context"
	"encoding/json"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/client"
)

// A pod keeps its batch.kubernetes.io/job-tracking finalizer until its
// Job has counted it. When the Job is gone (deleted with its pods in the
// background), or finished, or the pod is no longer the Job's, nobody
// will count it: the orphan queue removes the finalizer, so that the pod
// can finish being deleted.

// orphanKey names one pod (name), or every pod of a namespace a
// selector matches (a Job that went or finished).
type orphanKey struct {
	namespace, name, selector string
}

// syncOrphan removes the tracking finalizer from the pod, or pods, of key
// that no live Job will count.
func (c *Controller) syncOrphan(ctx context.Context, key orphanKey) error {
	if key.name != "" {
		obj, ok := c.pods.Cache().Get(key.namespace + "/" + key.name)
		if !ok {
			return nil // gone: nothing to free
		}
		return c.freeOrphan(ctx, obj.(*corev1.Pod))
	}
	sel, err := labels.Parse(key.selector)
	if err != nil {
		c.log.Error("bad selector, not retrying", "namespace", key.namespace, "selector", key.selector, "err", err)
		return nil
	}
	for _, obj := range c.pods.Cache().ByIndex(client.IndexByNamespace, key.namespace) {
		pod := obj.(*corev1.Pod)
		if !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		if err := c.freeOrphan(ctx, pod); err != nil {
			// Retried on its own, with its own backoff.
			c.log.Warn("could not free orphan pod, will retry", "pod", client.KeyOf(pod), "err", err)
			c.orphans.AddRateLimited(orphanKey{namespace: pod.Namespace, name: pod.Name})
		}
	}
	return nil
}

// freeOrphan removes the pod's tracking finalizer unless a live, unfinished
// Job controls it (then the Job counts it first).
func (c *Controller) freeOrphan(ctx context.Context, pod *corev1.Pod) error {
	if !hasTrackingFinalizer(pod) {
		return nil
	}
	if ref := metav1.GetControllerOf(pod); ref != nil {
		if ref.Kind != controllerKind.Kind || ref.APIVersion != batchv1.SchemeGroupVersion.String() {
			return nil // not a Job's pod: not our finalizer to remove
		}
		if job := c.resolveControllerRef(pod.Namespace, ref); job != nil && (managedByOther(job) || !isFinished(job)) {
			return nil
		}
	}
	err := c.removeTrackingFinalizer(ctx, pod)
	if err == nil {
		c.log.Info("removed tracking finalizer of orphan pod", "pod", client.KeyOf(pod))
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// removeTrackingFinalizer patches the finalizer out of the pod's list,
// leaving any other finalizer in place ($deleteFromPrimitiveList, as
// Kubernetes' job controller patches).
func (c *Controller) removeTrackingFinalizer(ctx context.Context, pod *corev1.Pod) error {
	if !hasTrackingFinalizer(pod) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"$deleteFromPrimitiveList/finalizers": []string{batchv1.JobTrackingFinalizer}}})
	if err != nil {
		return err
	}
	if err := c.client.Patch(ctx, client.Pods, pod.Namespace, pod.Name, types.StrategicMergePatchType, patch, nil); err != nil {
		return fmt.Errorf("remove tracking finalizer of %s: %w", client.KeyOf(pod), err)
	}
	return nil
}
