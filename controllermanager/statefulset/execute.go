package statefulset

import (
	"context"
	"errors"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
)

// maxBatch caps how many writes a Parallel phase has in flight, as
// Kubernetes' MaxBatchSize: a set of thousands of pods goes in batches of
// at most 500.
const maxBatch = 500

// execute makes the plan's writes, phase after phase, and stops at the
// first phase with an error (the next sync plans again). It returns the
// pods the rolling update deleted: they no longer count as current.
// Writes of the set's pods use updateSet, the set at its update revision,
// as Kubernetes does (its claim templates and policy are the set's).
func (c *Controller) execute(ctx context.Context, set, updateSet *appsv1.StatefulSet, p *plan) (rolled []*corev1.Pod, err error) {
	for _, ph := range p.phases {
		run := func(item []op) error {
			for _, o := range item {
				if err := c.do(ctx, set, updateSet, o); err != nil {
					return err
				}
			}
			return nil
		}
		if ph.ordered {
			for _, item := range ph.items {
				if err := run(item); err != nil {
					return rolled, err
				}
				if ph.name == rollingUpdatePhase {
					rolled = append(rolled, item[0].pod)
				}
			}
			continue
		}
		if err := slowStartBatch(ph.items, run); err != nil {
			return rolled, err
		}
	}
	return rolled, nil
}

// slowStartBatch runs fn on the items in batches of 1, 2, 4, ... (at most
// maxBatch), each batch at once, and stops after a batch with an error:
// if the first pod cannot be created (a quota, a bad template) we learn
// it from one request, not hundreds.
func slowStartBatch(items [][]op, fn func([]op) error) error {
	for done, size := 0, 1; done < len(items); size = min(2*size, maxBatch) {
		batch := items[done:min(done+size, len(items))]
		errs := make([]error, len(batch))
		var wg sync.WaitGroup // owner: this loop; each goroutine ends with its fn
		for i, item := range batch {
			wg.Go(func() { errs[i] = fn(item) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		done += len(batch)
	}
	return nil
}

// do makes one write.
func (c *Controller) do(ctx context.Context, set, updateSet *appsv1.StatefulSet, o op) error {
	switch o.kind {
	case opCreate:
		return c.createPod(ctx, set, o.pod)
	case opDelete:
		return c.deletePod(ctx, set, o.pod, o.why)
	case opEnsureClaims:
		if err := c.createClaims(ctx, set, o.pod); err != nil {
			return err
		}
		return c.fixClaimOwners(ctx, updateSet, o.pod)
	case opUpdate:
		return c.updatePod(ctx, updateSet, o.pod)
	case opFixClaimRefs:
		return c.fixClaimOwners(ctx, updateSet, o.pod)
	}
	return fmt.Errorf("unknown op %d", o.kind)
}

// createPod creates the pod's claims, then the pod (Kubernetes'
// CreateStatefulPod): the claims must exist first, or the scheduler would
// hold the pod back waiting for them.
func (c *Controller) createPod(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	if err := c.createClaims(ctx, set, pod); err != nil {
		c.podEvent(set, "create", pod, err)
		return err
	}
	created := &corev1.Pod{}
	err := c.client.Create(ctx, client.Pods, set.Namespace, pod, created)
	if apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create pod %s: %w", keyOf(pod), err) // retried: the cache is behind; no event, as Kubernetes
	}
	if err == nil {
		c.exp.expectCreate(keyOf(set), keyOf(pod))
		c.log.Info("created pod", "statefulset", keyOf(set), "pod", keyOf(pod), "revision", revisionOf(pod))
		// The claims' references to the pod, as far as they can be set
		// now (the claims may not be in the cache yet: a later sync).
		err = c.fixClaimOwners(ctx, set, created)
	}
	c.podEvent(set, "create", pod, err)
	if err != nil {
		return fmt.Errorf("create pod %s: %w", keyOf(pod), err)
	}
	return nil
}

// deletePod deletes a pod; one already gone is no error.
func (c *Controller) deletePod(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod, why string) error {
	opts := &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}}
	err := c.client.Delete(ctx, client.Pods, pod.Namespace, pod.Name, opts)
	if err != nil && !apierrors.IsNotFound(err) {
		c.podEvent(set, "delete", pod, err)
		return fmt.Errorf("delete pod %s: %w", keyOf(pod), err)
	}
	c.exp.expectDelete(keyOf(set), keyOf(pod), pod.UID)
	c.log.Info("deleted pod", "statefulset", keyOf(set), "pod", keyOf(pod), "why", why)
	c.podEvent(set, "delete", pod, nil)
	return nil
}

// updatePod gives a pod back its identity and storage (someone changed
// its labels, say) and its claims the policy's references (Kubernetes'
// UpdateStatefulPod). A conflict is retried on a fresh read.
func (c *Controller) updatePod(ctx context.Context, set *appsv1.StatefulSet, cached *corev1.Pod) error {
	pod := cached.DeepCopy()
	for attempt := 0; ; attempt++ {
		changed := false
		if !identityMatches(set, pod) {
			updateIdentity(set, pod)
			changed = true
		}
		if !storageMatches(set, pod) {
			updateStorage(set, pod)
			changed = true
			if err := c.createClaims(ctx, set, pod); err != nil {
				c.podEvent(set, "update", pod, err)
				return fmt.Errorf("update pod %s: %w", keyOf(pod), err)
			}
		}
		if err := c.fixClaimOwners(ctx, set, pod); err != nil {
			c.podEvent(set, "update", pod, err)
			return fmt.Errorf("update pod %s: %w", keyOf(pod), err)
		}
		if !changed {
			return nil
		}
		err := c.client.Update(ctx, client.Pods, pod.Namespace, pod.Name, pod, nil)
		if !apierrors.IsConflict(err) || attempt == 2 {
			c.podEvent(set, "update", pod, err)
			if err != nil {
				return fmt.Errorf("update pod %s: %w", keyOf(pod), err)
			}
			c.log.Info("restored pod identity and storage", "statefulset", keyOf(set), "pod", keyOf(pod))
			return nil
		}
		fresh := &corev1.Pod{}
		if err := c.client.Get(ctx, client.Pods, pod.Namespace, pod.Name, fresh); err != nil {
			return fmt.Errorf("update pod %s: %w", keyOf(pod), err)
		}
		pod = fresh
	}
}

// createClaims creates the pod's missing claims from the templates. A
// claim being deleted is an error: the pod must wait for it to go, then
// get a new one.
func (c *Controller) createClaims(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	var errs []error
	cached := c.cachedClaim(set.Namespace)
	for _, claim := range claimsFor(set, ordinalOf(pod)) {
		existing := cached(claim.Name)
		if existing == nil {
			err := c.client.Create(ctx, client.PersistentVolumeClaims, set.Namespace, claim, nil)
			switch {
			case err == nil:
				c.log.Info("created claim", "statefulset", keyOf(set), "pod", pod.Name, "claim", claim.Name)
				c.claimEvent(set, pod, claim, nil)
				continue
			case apierrors.IsAlreadyExists(err):
				// Our cache is behind: look at the claim itself.
				existing = &corev1.PersistentVolumeClaim{}
				if err := c.client.Get(ctx, client.PersistentVolumeClaims, set.Namespace, claim.Name, existing); err != nil {
					errs = append(errs, fmt.Errorf("failed to retrieve PVC %s: %w", claim.Name, err))
					continue
				}
			default:
				c.claimEvent(set, pod, claim, err)
				errs = append(errs, fmt.Errorf("failed to create PVC %s: %w", claim.Name, err))
				continue
			}
		}
		if existing.DeletionTimestamp != nil {
			errs = append(errs, fmt.Errorf("pvc %s is being deleted", claim.Name))
		}
	}
	return errors.Join(errs...)
}

// fixClaimOwners gives the pod's cached claims the references the
// retention policy wants (retention.go). A claim not in the cache yet is
// picked up by a later sync.
func (c *Controller) fixClaimOwners(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	cached := c.cachedClaim(set.Namespace)
	for _, want := range claimsFor(set, ordinalOf(pod)) {
		claim := cached(want.Name)
		if claim == nil || claimOwnerUpToDate(claim, set, pod) {
			continue
		}
		if hasUnexpectedController(claim, set, pod) {
			c.rec.Event(set, corev1.EventTypeWarning, ReasonConflictingController,
				"PersistentVolumeClaim %s has a conflicting OwnerReference that acts as a manging controller, the retention policy is ignored for this claim", claim.Name)
		}
		next := claim.DeepCopy()
		setClaimOwners(next, set, pod)
		if err := c.client.Update(ctx, client.PersistentVolumeClaims, next.Namespace, next.Name, next, nil); err != nil {
			return fmt.Errorf("could not update claim %s for delete policy ownerRefs: %w", claim.Name, err)
		}
		c.log.Info("set claim owners for the retention policy", "statefulset", keyOf(set), "claim", claim.Name, "owners", len(next.OwnerReferences))
	}
	return nil
}

// podEvent is Kubernetes' recordPodEvent: SuccessfulCreate "Create Pod
// web-0 in StatefulSet web successful", FailedDelete "Delete Pod web-2 in
// StatefulSet web failed error: ...".
func (c *Controller) podEvent(set *appsv1.StatefulSet, verb string, pod *corev1.Pod, err error) {
	v := title(verb)
	if err == nil {
		c.rec.Event(set, corev1.EventTypeNormal, podEventReasons[verb].ok, "%s Pod %s in StatefulSet %s successful", v, pod.Name, set.Name)
		return
	}
	c.rec.Event(set, corev1.EventTypeWarning, podEventReasons[verb].failed, "%s Pod %s in StatefulSet %s failed error: %s", v, pod.Name, set.Name, err)
}

// podEventReasons are podEvent's reasons for each verb: Successful<Verb>
// and Failed<Verb>.
var podEventReasons = map[string]struct{ ok, failed string }{
	"create": {ReasonSuccessfulCreate, ReasonFailedCreate},
	"update": {ReasonSuccessfulUpdate, ReasonFailedUpdate},
	"delete": {ReasonSuccessfulDelete, ReasonFailedDelete},
}

// claimEvent is Kubernetes' recordClaimEvent for a claim's creation.
func (c *Controller) claimEvent(set *appsv1.StatefulSet, pod *corev1.Pod, claim *corev1.PersistentVolumeClaim, err error) {
	if err == nil {
		c.rec.Event(set, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Create Claim %s Pod %s in StatefulSet %s success", claim.Name, pod.Name, set.Name)
		return
	}
	c.rec.Event(set, corev1.EventTypeWarning, ReasonFailedCreate, "Create Claim %s for Pod %s in StatefulSet %s failed error: %s", claim.Name, pod.Name, set.Name, err)
}

// title is "create" → "Create": the verbs are ASCII.
func title(verb string) string { return string(verb[0]-'a'+'A') + verb[1:] }
