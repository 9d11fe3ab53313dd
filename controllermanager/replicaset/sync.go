package replicaset

import (
	"context"
	"fmt"
	"sort"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/internal/podcondition"
	"github.com/mkube/mkube/internal/seedstep"
)

// burstReplicas caps the pods created or deleted in one sync, so one huge
// ReplicaSet cannot monopolise the API server (Kubernetes uses 500 too).
const burstReplicas = 500

// sync makes the ReplicaSet's pods match spec.replicas, then writes status.
func (c *Controller) sync(ctx context.Context, key string) error {
	obj, ok := c.rsets.Cache().Get(key)
	if !ok {
		// Deleted: its pods are the garbage collector's business.
		c.exp.Forget(key)
		return nil
	}
	rs := c.kind.asReplicaSet(obj)
	sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		c.log.Error("invalid selector, not retrying", "replicaset", key, "err", err)
		return nil // retrying cannot fix a selector; an update will requeue it
	}
	// The pods the ReplicaSet controls: orphans it matches adopted, strays
	// released (Kubernetes' ControllerRefManager rules).
	pods, err := controller.PodClaim{Client: c.client, Pods: c.pods.Cache(), Owner: rs, Kind: c.kind.gvk,
		Selector: sel, Log: c.log}.Claim(ctx)
	if err != nil {
		return err
	}
	active := filterActive(pods)

	var manageErr error
	if rs.DeletionTimestamp == nil && c.exp.Satisfied(key) {
		manageErr = c.manageReplicas(ctx, rs, active)
	}
	if err := c.updateStatus(ctx, rs, active, sel, manageErr); err != nil {
		return err
	}
	return manageErr
}

// manageReplicas creates or deletes pods to close the gap (step 6).
func (c *Controller) manageReplicas(ctx context.Context, rs *appsv1.ReplicaSet, active []*corev1.Pod) error {
	key := client.KeyOf(rs)
	want := int(*rs.Spec.Replicas)
	diff := len(active) - want
	switch {
	case diff < 0:
		n := min(-diff, burstReplicas)
		c.log.Info("too few pods, creating", seedstep.Key, seedstep.ControllerCreatesPods, "replicaset", key, "want", want, "have", len(active), "creating", n)
		c.exp.ExpectCreations(key, n)
		created, err := slowStartBatch(n, func() error { return c.createPod(ctx, rs) })
		for range n - created {
			c.exp.CreationObserved(key) // never going to arrive
		}
		return err
	case diff > 0:
		n := min(diff, burstReplicas)
		victims := podsToDelete(active, n)
		keys := make([]string, len(victims))
		for i, p := range victims {
			keys[i] = client.KeyOf(p)
		}
		c.log.Info("too many pods, deleting", "replicaset", key, "want", want, "have", len(active), "deleting", keys)
		c.exp.ExpectDeletions(key, keys)
		var wg sync.WaitGroup
		errs := make([]error, len(victims))
		for i, pod := range victims {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = c.deletePod(ctx, rs, pod)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// createPod creates one pod from the template, owned by the ReplicaSet.
func (c *Controller) createPod(ctx context.Context, rs *appsv1.ReplicaSet) error {
	pod := newPod(rs, c.kind.gvk)
	if err := c.client.Create(ctx, client.Pods, rs.Namespace, pod, pod); err != nil {
		c.rec.Event(rs, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating: %v", err)
		return fmt.Errorf("create pod for %s: %w", client.KeyOf(rs), err)
	}
	c.log.Info("created pod", seedstep.Key, seedstep.ControllerCreatesPods, "replicaset", client.KeyOf(rs), "pod", client.KeyOf(pod))
	c.rec.Event(rs, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created pod: %s", pod.Name)
	return nil
}

func (c *Controller) deletePod(ctx context.Context, rs *appsv1.ReplicaSet, pod *corev1.Pod) error {
	key := client.KeyOf(rs)
	opts := &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}}
	err := c.client.Delete(ctx, client.Pods, pod.Namespace, pod.Name, opts)
	if apierrors.IsNotFound(err) {
		// Already gone: its DELETED event may have been handled before
		// this sync recorded the expectation, so it may never be counted.
		// Observing it twice is harmless: deletions are tracked by key.
		c.exp.DeletionObserved(key, client.KeyOf(pod))
	} else if err != nil {
		c.exp.DeletionObserved(key, client.KeyOf(pod)) // never going to arrive
		c.rec.Event(rs, corev1.EventTypeWarning, ReasonFailedDelete, "Error deleting: %v", err)
		return fmt.Errorf("delete pod %s: %w", client.KeyOf(pod), err)
	}
	c.log.Info("deleted pod", "replicaset", key, "pod", client.KeyOf(pod))
	c.rec.Event(rs, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted pod: %s", pod.Name)
	return nil
}

// newPod is the pod a ReplicaSet creates: its template, a generated name,
// and a controller ownerReference that ties it to the ReplicaSet (and lets
// the garbage collector delete it with the ReplicaSet).
func newPod(rs *appsv1.ReplicaSet, gvk schema.GroupVersionKind) *corev1.Pod {
	t := rs.Spec.Template.DeepCopy()
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    rs.Name + "-",
			Namespace:       rs.Namespace,
			Labels:          t.Labels,
			Annotations:     t.Annotations,
			Finalizers:      t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, gvk)},
		},
		Spec: t.Spec,
	}
}

// slowStartBatch calls fn count times in batches of 1, 2, 4, ... and stops
// at the first batch with an error: if the first pod cannot be created
// (a quota, a bad template), we learn it from one request, not hundreds.
func slowStartBatch(count int, fn func() error) (int, error) {
	done := 0
	for batch := 1; done < count; batch *= 2 {
		batch = min(batch, count-done)
		errs := make(chan error, batch)
		var wg sync.WaitGroup
		for range batch {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- fn()
			}()
		}
		wg.Wait()
		close(errs)
		var first error
		for err := range errs {
			if err == nil {
				done++
			} else if first == nil {
				first = err
			}
		}
		if first != nil {
			return done, first
		}
	}
	return done, nil
}

// filterActive drops pods that finished or are being deleted: they no
// longer count towards replicas.
func filterActive(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	return out
}

// podsToDelete picks the n pods it hurts least to lose, in Kubernetes'
// order: not yet scheduled, then pending, then not ready, then the newest.
func podsToDelete(pods []*corev1.Pod, n int) []*corev1.Pod {
	sorted := append([]*corev1.Pod(nil), pods...)
	rank := func(p *corev1.Pod) [3]int {
		phase := map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}[p.Status.Phase]
		return [3]int{boolInt(p.Spec.NodeName != ""), phase, boolInt(podcondition.IsReady(p))}
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		ri, rj := rank(sorted[i]), rank(sorted[j])
		if ri != rj {
			for k := range ri {
				if ri[k] != rj[k] {
					return ri[k] < rj[k]
				}
			}
		}
		return sorted[i].CreationTimestamp.After(sorted[j].CreationTimestamp.Time)
	})
	return sorted[:n]
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
