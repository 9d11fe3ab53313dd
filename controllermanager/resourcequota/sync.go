package resourcequota

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/quota"
)

// sync recounts one quota (Kubernetes' syncResourceQuota): status.hard
// becomes spec.hard, and status.used the usage counted now for every
// name the controller can count, keeping the figures it cannot (a
// count/ of a resource it does not watch) as they were. It writes only
// when something changed.
func (c *Controller) sync(ctx context.Context, key string) error {
	obj, ok := c.quotas.Cache().Get(key)
	if !ok {
		return nil // deleted: nothing to keep
	}
	q := obj.(*corev1.ResourceQuota)
	counted, countErr := quota.CalculateUsage(q, c.evaluators, c.list, c.clock.Now())
	next := q.DeepCopy() // never change the cached object
	next.Status = status(q, counted)
	if next.Status.Used != nil && q.Status.Used != nil && q.Status.Hard != nil &&
		quota.Equals(next.Status.Hard, q.Status.Hard) && quota.Equals(next.Status.Used, q.Status.Used) {
		// Retried if a listing failed, else done.
		return countErr
	}
	// A conflict means admission charged the quota meanwhile: the cache
	// will bring the new figures, and the retry counts on them.
	if err := c.client.UpdateStatus(ctx, ResourceQuotas, q.Namespace, q.Name, next, nil); err != nil {
		return errors.Join(countErr, fmt.Errorf("update status of %s: %w", key, err))
	}
	c.log.Info("updated quota status", "resourcequota", key, "used", quota.Format(next.Status.Used))
	return countErr // retried if a listing failed, with the rest written
}

// status is q's new status: hard from the spec, and used from what was
// counted, over what q had, on the names of hard only.
func status(q *corev1.ResourceQuota, counted corev1.ResourceList) corev1.ResourceQuotaStatus {
	used := corev1.ResourceList{}
	for name, v := range q.Status.Used {
		used[name] = v.DeepCopy()
	}
	for name, v := range counted {
		used[name] = v
	}
	hard := quota.Add(corev1.ResourceList{}, q.Spec.Hard)
	return corev1.ResourceQuotaStatus{Hard: hard, Used: quota.Mask(used, quota.Names(hard))}
}

// list is quota.CalculateUsage's view of the caches: the objects of an
// evaluator's resource in one namespace.
func (c *Controller) list(e quota.Evaluator, namespace string) ([]runtime.Object, error) {
	inf, ok := c.counted[e.GroupResource()]
	if !ok {
		return nil, fmt.Errorf("resource %s is not counted", e.GroupResource())
	}
	return inf.Cache().ByIndex(client.IndexByNamespace, namespace), nil
}

// usageChanged reports whether an update to a counted object changes
// what it costs, so that its quotas are recounted now rather than at the
// next full resync (Kubernetes' DefaultUpdateFilter); creations and most
// updates were charged by admission already.
func usageChanged(gr schema.GroupResource, oldObj, obj runtime.Object, now time.Time) bool {
	switch gr {
	case schema.GroupResource{Resource: "pods"}:
		old, pod := oldObj.(*corev1.Pod), obj.(*corev1.Pod)
		// Finished, or past its deletion grace period; moved between
		// the Terminating scopes; resized in place.
		return quota.Charged(old, now) && !quota.Charged(pod, now) ||
			quota.IsTerminating(old) != quota.IsTerminating(pod) || resized(old, pod)
	case schema.GroupResource{Resource: "services"}:
		return quota.QuotaType(oldObj.(*corev1.Service)) != quota.QuotaType(obj.(*corev1.Service))
	case schema.GroupResource{Resource: "persistentvolumeclaims"}:
		return quota.ClaimUsageChanged(obj.(*corev1.PersistentVolumeClaim), oldObj.(*corev1.PersistentVolumeClaim))
	}
	return false
}

// resized: the kubelet reports other resources for a container than
// before, an in-place resize taking effect.
func resized(old, pod *corev1.Pod) bool {
	before := map[string]*corev1.ResourceRequirements{}
	for _, s := range old.Status.ContainerStatuses {
		before[s.Name] = s.Resources
	}
	for _, s := range pod.Status.ContainerStatuses {
		if b, ok := before[s.Name]; ok && !resourcesEqual(b, s.Resources) {
			return true
		}
	}
	return false
}

func resourcesEqual(a, b *corev1.ResourceRequirements) bool {
	if a == nil || b == nil {
		return a == b
	}
	return quota.Equals(a.Requests, b.Requests) && quota.Equals(a.Limits, b.Limits)
}

func namespaceOf(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetNamespace()
}
