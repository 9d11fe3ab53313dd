package tainteviction

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/client"
)

// ReasonTaintManagerEviction is the reason of the events this
// controller writes, as in Kubernetes.
const ReasonTaintManagerEviction = "TaintManagerEviction"

// countdown is a pod's pending eviction.
type countdown struct {
	uid  types.UID // the pod it was started for: a new pod with the same name starts afresh
	node string
	seen map[string]time.Time // taintID → when this controller first saw it with the pod on the node
	at   time.Time            // the deadline, on c.clock; a timer adds the pod's key then
}

// sync decides the fate of one pod from the caches: delete it now, make
// sure its eviction is scheduled, or cancel a scheduled one.
func (c *Controller) sync(ctx context.Context, key string) error {
	obj, ok := c.pods.Get(key)
	if !ok {
		c.cancel(key, nil, "pod deleted") // nothing left to evict: absorbed
		return nil
	}
	pod := obj.(*corev1.Pod)
	if pod.DeletionTimestamp != nil {
		// Already terminating, by us or by somebody else: its kubelet is
		// stopping it, and a second DELETE would change nothing. Absorbed.
		c.cancel(key, nil, "pod is terminating")
		return nil
	}
	node := pod.Spec.NodeName
	if node == "" {
		return nil // not bound: no taint applies yet; its binding queues it again
	}
	nodeObj, ok := c.nodes.Get(node)
	if !ok {
		// The node is gone, so there is no taint to evict the pod for.
		// Kubernetes' pod garbage collector (PodGC, not in mkube) deletes
		// pods bound to nodes that no longer exist.
		c.cancel(key, pod, "node "+node+" deleted")
		return nil // absorbed: nothing to retry until the node comes back, which queues the pod
	}
	taints := noExecuteTaints(nodeObj.(*corev1.Node).Spec.Taints)
	if len(taints) == 0 {
		c.cancel(key, pod, "taint removed from "+node)
		return nil // absorbed: a new taint queues the pod again
	}

	v := decide(taints, pod.Spec.Tolerations)
	switch v.action {
	case stay:
		c.cancel(key, pod, "pod tolerates every NoExecute taint of "+node+" for ever")
		return nil // absorbed: only a change of taints or tolerations can change that
	case evictNow:
		if v.tolerated {
			c.log.Info(fmt.Sprintf("pod tolerates %s's taint %s for 0s or less: evicting now", node, taintID(v.taint)),
				"pod", key, "node", node, "taint", taintID(v.taint))
		} else {
			c.log.Info(fmt.Sprintf("pod does not tolerate %s's taint %s: evicting now", node, taintID(v.taint)),
				"pod", key, "node", node, "taint", taintID(v.taint))
		}
		return c.evict(ctx, key, pod) // a failed DELETE is retried
	}
	return c.evictLater(ctx, key, pod, v.limits) // its timer brings the key back at the deadline
}

// evictLater starts or updates the pod's countdown and deletes the pod
// once its deadline has passed. Its timer is set only when the deadline
// is new or moved, not on every sync; an outdated timer that fires early
// finds the deadline still ahead and does nothing.
func (c *Controller) evictLater(ctx context.Context, key string, pod *corev1.Pod, limits []limit) error {
	now := c.clock.Now()
	c.mu.Lock()
	cd := c.countdown[key]
	if cd == nil || cd.uid != pod.UID {
		cd = &countdown{uid: pod.UID, node: pod.Spec.NodeName}
	}
	// Keep the start of the taints still there; start the new ones now.
	seen := map[string]time.Time{}
	for _, l := range limits {
		id := taintID(l.taint)
		if t, ok := cd.seen[id]; ok {
			seen[id] = t
		} else {
			seen[id] = now
		}
	}
	at, by := deadline(limits, seen)
	first, moved := cd.at.IsZero(), !at.Equal(cd.at)
	cd.seen, cd.at = seen, at
	c.countdown[key] = cd
	c.mu.Unlock()

	node, taint := pod.Spec.NodeName, taintID(by.taint)
	if !now.Before(at) {
		c.log.Info(fmt.Sprintf("pod tolerated %s's taint %s for %ds, time is up: evicting now", node, taint, by.seconds),
			"pod", key, "node", node, "taint", taint)
		return c.evict(ctx, key, pod)
	}
	if moved {
		what := "eviction scheduled"
		if !first {
			what = "eviction rescheduled" // a taint came or went
		}
		c.log.Info(fmt.Sprintf("pod tolerates %s's taint %s for %ds: %s", node, taint, by.seconds, what),
			"pod", key, "node", node, "taint", taint, "evictAt", at.Format(time.RFC3339), "in", at.Sub(now))
		c.queue.AddAfter(key, at.Sub(now))
	}
	return nil
}

// cancel forgets the pod's countdown, if it has one, and says why. pod is
// nil when there is no pod left to tell (deleted or terminating): then
// nothing is cancelled that a user would miss, and no event is written.
func (c *Controller) cancel(key string, pod *corev1.Pod, why string) {
	c.mu.Lock()
	cd, ok := c.countdown[key]
	delete(c.countdown, key)
	c.mu.Unlock()
	if !ok {
		return
	}
	if pod == nil {
		c.log.Info(why+": scheduled eviction dropped", "pod", key, "node", cd.node)
		return
	}
	if pod.UID != cd.uid {
		// The name now belongs to another pod: the old one was deleted.
		c.log.Info("pod replaced by a new one with the same name: scheduled eviction dropped", "pod", key, "node", cd.node)
		return
	}
	c.log.Info(why+": eviction cancelled", "pod", key, "node", cd.node, "wasDueAt", cd.at.Format(time.RFC3339))
	c.rec.Event(podRef(pod), corev1.EventTypeNormal, ReasonTaintManagerEviction, "Cancelling deletion of Pod %s", key)
}

// evict deletes the pod gracefully: no gracePeriodSeconds, so the API
// server applies the pod's own terminationGracePeriodSeconds, and the
// pod's UID as a precondition, so a new pod that took the name meanwhile
// is not deleted in its place.
func (c *Controller) evict(ctx context.Context, key string, pod *corev1.Pod) error {
	uid := pod.UID
	err := c.client.Delete(ctx, client.Pods, pod.Namespace, pod.Name,
		&metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	switch {
	case apierrors.IsNotFound(err):
		c.log.Info("pod already gone: nothing to evict", "pod", key)
	case apierrors.IsConflict(err):
		// The UID precondition failed: the name belongs to a new pod,
		// whose own add event queues it for a decision of its own.
		c.log.Info("pod replaced by a new one with the same name: not evicting the new one", "pod", key)
	case err != nil:
		return fmt.Errorf("evict pod %s: %w", key, err) // retried; the countdown is kept
	default:
		grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
		if pod.Spec.TerminationGracePeriodSeconds != nil {
			grace = *pod.Spec.TerminationGracePeriodSeconds
		}
		c.log.Info("deleted pod: its kubelet stops it within the grace period", "pod", key, "node", pod.Spec.NodeName,
			"gracePeriodSeconds", grace)
		c.rec.Event(podRef(pod), corev1.EventTypeNormal, ReasonTaintManagerEviction, "Marking for deletion Pod %s", key)
	}
	c.mu.Lock()
	delete(c.countdown, key)
	c.mu.Unlock()
	return nil
}

// podRef is the pod as an event's involvedObject: pods from a list carry
// no kind, which the event needs.
func podRef(pod *corev1.Pod) *corev1.Pod {
	return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, ResourceVersion: pod.ResourceVersion}}
}
