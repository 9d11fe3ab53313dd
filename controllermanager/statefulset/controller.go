// Package statefulset is the StatefulSet controller: it runs each set's
// pods as numbered, stable identities — web-0, web-1, web-2, each with its
// own hostname and PersistentVolumeClaims (identity.go) — made in order
// and replaced in place.
//
// Pipeline, as Kubernetes' pkg/controller/statefulset: informer handlers
// (a set changed; one of its pods changed; an orphan pod its selector
// matches appeared) → queue of StatefulSet keys → Run → workers → sync,
// which, for one set:
//
//  1. claims its ControllerRevisions and its pods (adopting orphans whose
//     name and labels say they are its, releasing pods that no longer
//     match; sync.go);
//  2. finds the current and the update revision, recording the template
//     as a new revision if it is new (revisions.go);
//  3. plans this sync's pod and claim writes from the cache: scale up,
//     scale down, replace failed pods, roll the update out (plan.go,
//     retention.go), and makes them (execute.go);
//  4. writes status — replicas, ready, available, current and updated
//     counts, the two revisions, collisionCount (status.go) — and deletes
//     revisions beyond spec.revisionHistoryLimit.
//
// Nothing waits inside a sync: a set that must wait for a pod to become
// Ready returns, and the pod's next update (the kubelet reporting it
// Ready) requeues the set.
//
// Where things live, besides the files named above: controller.go holds
// the Controller, its handlers and Run; expectations.go the pod writes
// sent but not yet seen in the cache, which a sync waits for; podstate.go
// the small questions about one pod (created, pending, terminal,
// terminating, running and ready).
package statefulset

import (
	"context"
	"log/slog"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/controllermanager/history"
	"github.com/mkube/mkube/internal/podcondition"
)

// ControllerName is the name the controller manager runs this controller
// by, and the key of its service account
// (bootstrappolicy.ControllerServiceAccounts).
const ControllerName = "statefulset"

// EventComponent signs its events (source.component), as Kubernetes'
// controller signs them.
const EventComponent = "statefulset-controller"

// The reasons of its events, as Kubernetes gives them.
const (
	ReasonConflictingController = "ConflictingController"
	ReasonSuccessfulUpdate      = "SuccessfulUpdate"
	ReasonFailedUpdate          = "FailedUpdate"
	ReasonSuccessfulDelete      = "SuccessfulDelete"
	ReasonFailedDelete          = "FailedDelete"
	ReasonSuccessfulCreate      = "SuccessfulCreate"
	ReasonFailedCreate          = "FailedCreate"
)

// DefaultWorkers is kube-controller-manager's --concurrent-statefulset-syncs.
const DefaultWorkers = 5

// Options tune the controller: Workers, 0 meaning DefaultWorkers.
type Options = controller.Options

// Controller keeps every StatefulSet's pods, claims and history.
type Controller struct {
	client    *client.Client
	sets      *client.Informer
	pods      *client.Informer
	claims    *client.Informer
	revisions *client.Informer
	history   *history.History
	queue     *workqueue.Queue[string] // StatefulSet keys, "namespace/name"
	workers   int
	exp       *expectations
	rec       *record.Recorder
	log       *slog.Logger
	clock     clock.PassiveClock // "now" for minReadySeconds
}

// New is the StatefulSet controller on d's shared informers; it registers
// its handlers and indexes, so call it before they run.
func New(d controller.Deps, o Options) *Controller {
	sets, pods := d.Informers.For(client.StatefulSets), d.Informers.For(client.Pods)
	claims, revisions := d.Informers.For(client.PersistentVolumeClaims), d.Informers.For(client.ControllerRevisions)
	c := &Controller{client: d.Client, sets: sets, pods: pods, claims: claims, revisions: revisions,
		history: history.NewHistory(d.Client, revisions), queue: workqueue.NewNamed[string](d.Clock, ControllerName, d.QueueMetrics),
		workers: o.WorkersOr(DefaultWorkers), exp: newExpectations(d.Clock),
		rec: d.Recorder.WithComponent(EventComponent), log: d.Log.With("controller", ControllerName), clock: d.Clock}
	pods.Cache().AddIndex(client.IndexByOwnerUID, client.OwnerUIDIndex)
	pods.Cache().AddIndex(client.IndexByNamespace, client.NamespaceIndex)
	sets.Cache().AddIndex(client.IndexByNamespace, client.NamespaceIndex)
	sets.AddHandler(client.Handler{
		OnAdd:    c.enqueue,
		OnUpdate: func(_, obj runtime.Object) { c.enqueue(obj) },
		OnDelete: c.enqueue,
	})
	pods.AddHandler(client.Handler{OnAdd: c.podAdded, OnUpdate: c.podUpdated, OnDelete: c.podDeleted})
	return c
}

func (c *Controller) enqueue(obj runtime.Object) { c.queue.Add(client.KeyOf(obj)) }

func keyOf(obj runtime.Object) string { return client.KeyOf(obj) }

// owner is the cached set that controls pod, if any (its controller
// ownerReference names a StatefulSet of that name and UID).
func (c *Controller) owner(pod *corev1.Pod) *appsv1.StatefulSet {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != controllerKind.Kind {
		return nil
	}
	obj, ok := c.sets.Cache().Get(pod.Namespace + "/" + ref.Name)
	if !ok || obj.(*appsv1.StatefulSet).UID != ref.UID {
		return nil
	}
	return obj.(*appsv1.StatefulSet)
}

// podAdded: a pod we created came back through the watch, or an orphan
// appeared that a set may adopt.
func (c *Controller) podAdded(obj runtime.Object) {
	pod := obj.(*corev1.Pod)
	if set := c.owner(pod); set != nil {
		c.enqueue(set)
		return
	}
	if metav1.GetControllerOf(pod) == nil && pod.DeletionTimestamp == nil {
		c.enqueueSelecting(pod)
	}
}

// podUpdated: every change of an owned pod may unblock its set (Running,
// Ready, terminating); a change of owner requeues both sets; a relabelled
// orphan may now be adopted.
func (c *Controller) podUpdated(oldObj, obj runtime.Object) {
	old, pod := oldObj.(*corev1.Pod), obj.(*corev1.Pod)
	if prev := c.owner(old); prev != nil {
		if set := c.owner(pod); set == nil || set.UID != prev.UID {
			c.enqueue(prev)
		}
	}
	if set := c.owner(pod); set != nil {
		c.enqueue(set)
		if !podcondition.IsReady(old) && podcondition.IsReady(pod) && set.Spec.MinReadySeconds > 0 {
			// Available minReadySeconds from now: no event will say so.
			c.queue.AddAfter(keyOf(set), time.Duration(set.Spec.MinReadySeconds)*time.Second)
		}
		return
	}
	if metav1.GetControllerOf(pod) == nil {
		c.enqueueSelecting(pod)
	}
}

func (c *Controller) podDeleted(obj runtime.Object) {
	if set := c.owner(obj.(*corev1.Pod)); set != nil {
		c.enqueue(set)
	}
}

// enqueueSelecting queues every set in the pod's namespace whose selector
// matches it: one of them may adopt it.
func (c *Controller) enqueueSelecting(pod *corev1.Pod) {
	for _, obj := range c.sets.Cache().ByIndex(client.IndexByNamespace, pod.Namespace) {
		set := obj.(*appsv1.StatefulSet)
		if sel, err := metav1.LabelSelectorAsSelector(set.Spec.Selector); err == nil && !sel.Empty() && sel.Matches(labels.Set(pod.Labels)) {
			c.enqueue(set)
		}
	}
}

// Run waits for the caches and runs the workers; it blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	client.RunWorkers(ctx, c.queue, c.workers, c.sync, c.log, "statefulset", c.sets, c.pods, c.claims, c.revisions)
}
