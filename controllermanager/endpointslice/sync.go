package endpointslice

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
)

// sync brings one Service's slices to the desired state.
func (c *Controller) sync(ctx context.Context, key string) error {
	obj, ok := c.services.Cache().Get(key)
	if !ok {
		// Absorbed: its slices name it as their controlling owner, so the
		// garbage collector deletes them; nothing is left to track.
		c.tracker.forget(key)
		c.triggers.forget(key)
		return nil
	}
	svc := obj.(*corev1.Service)
	if svc.Spec.Selector == nil || svc.Spec.Type == corev1.ServiceTypeExternalName {
		// Absorbed: a selector-less Service's slices are written by its
		// user; an ExternalName Service is a DNS alias, with no endpoints.
		return nil
	}
	if svc.DeletionTimestamp != nil {
		// Absorbed: a Service deleted in the foreground waits for the
		// garbage collector to delete its slices; a placeholder made now
		// would only make it wait again.
		return nil
	}
	if behind, wait := c.tracker.behind(key, c.inCache); behind {
		// Absorbed: the events of our own writes requeue the Service once
		// the cache shows them; the delayed add is for an event never seen.
		c.log.Debug("slices cache behind our writes, waiting", "service", key)
		c.queue.AddAfter(key, wait)
		return nil
	}
	pods := c.podsOf(svc)
	triggerTime := c.triggers.compute(key, svc, pods)
	p := reconcile(svc, desiredGroups(svc, pods, c.zoneOf), c.slicesOf(key), c.maxPerSlice)
	if p.empty() {
		return nil // nothing changed: nothing is written
	}
	err := c.apply(ctx, key, p, triggerTime)
	if err != nil && !apierrors.IsConflict(err) {
		// Kubernetes' event for a sync that failed; a Conflict is only a
		// stale cache, retried after a few milliseconds, and not worth one.
		c.rec.Event(svc, corev1.EventTypeWarning, ReasonFailedToUpdateEndpointSlices,
			"Error updating Endpoint Slices for Service %s: %v", key, err)
	}
	// Retried on error, with backoff: what was written stays written,
	// and the next sync plans from there.
	return err
}

// apply sends a plan: creates first, then updates, then deletes, so that
// an endpoint moving between slices is never missing from all of them.
// Every write is of the Service's slices as the cache showed them: an
// update carries their resourceVersion and a delete their UID, so a
// slice someone changed meanwhile is a Conflict, not overwritten.
func (c *Controller) apply(ctx context.Context, key string, p plan, triggerTime time.Time) error {
	ns, _ := splitKey(key)
	var created, deleted []string
	defer func() { c.tracker.expect(key, created, deleted) }()
	for _, s := range p.create {
		setTriggerTime(s, triggerTime)
		out := &discoveryv1.EndpointSlice{}
		if err := c.client.Create(ctx, client.EndpointSlices, ns, s, out); err != nil {
			return fmt.Errorf("create endpointslice for service %s: %w", key, err)
		}
		created = append(created, client.KeyOf(out))
		c.log.Info("created endpointslice", "service", key, "endpointslice", client.KeyOf(out),
			"endpoints", len(out.Endpoints), "ready", countReady(out))
	}
	for _, s := range p.update {
		setTriggerTime(s, triggerTime)
		if err := c.client.Update(ctx, client.EndpointSlices, ns, s.Name, s, nil); err != nil {
			return fmt.Errorf("update endpointslice %s: %w", client.KeyOf(s), err)
		}
		c.log.Info("updated endpointslice", "service", key, "endpointslice", client.KeyOf(s),
			"endpoints", len(s.Endpoints), "ready", countReady(s))
	}
	for _, s := range p.remove {
		uid := s.UID
		err := c.client.Delete(ctx, client.EndpointSlices, ns, s.Name, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete endpointslice %s: %w", client.KeyOf(s), err)
		}
		deleted = append(deleted, client.KeyOf(s))
		c.log.Info("deleted endpointslice", "service", key, "endpointslice", client.KeyOf(s))
	}
	return nil
}

// inCache reports whether the slices cache holds a slice, and whether
// it is being deleted.
func (c *Controller) inCache(slice string) (present, terminating bool) {
	obj, ok := c.slices.Cache().Get(slice)
	return ok, ok && obj.(*discoveryv1.EndpointSlice).DeletionTimestamp != nil
}

// setTriggerTime writes endpoints.kubernetes.io/last-change-trigger-time
// on a slice about to be written, or removes a stale one when this sync
// has no trigger time.
func setTriggerTime(s *discoveryv1.EndpointSlice, at time.Time) {
	if at.IsZero() {
		delete(s.Annotations, corev1.EndpointsLastChangeTriggerTime)
		return
	}
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations[corev1.EndpointsLastChangeTriggerTime] = at.UTC().Format(time.RFC3339Nano)
}

func countReady(s *discoveryv1.EndpointSlice) int {
	n := 0
	for _, ep := range s.Endpoints {
		if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
			n++
		}
	}
	return n
}
