// Package daemon is the DaemonSet controller (Kubernetes'
// "daemonset-controller"): one pod of each DaemonSet's template on every
// node that should run it, and none elsewhere.
//
// Pipeline: informer handlers (DaemonSets, pods, nodes, ControllerRevisions)
// → queue of DaemonSet keys → Run → workers → sync. sync, for one
// DaemonSet:
//
//  1. records its template as a ControllerRevision if it is new (revisions.go)
//     and takes the revision's hash, which labels the pods it creates;
//  2. for each node, decides whether a daemon pod belongs there
//     (placement.go), then creates the missing pods and deletes those of
//     nodes that no longer fit, the failed ones and the extra ones
//     (manage.go);
//  3. with updateStrategy RollingUpdate, replaces the pods of old
//     templates, maxUnavailable or maxSurge at a time (rolling.go); with
//     OnDelete, only pods somebody deleted come back new;
//  4. deletes the revisions beyond spec.revisionHistoryLimit;
//  5. writes status: desired, current, ready, up-to-date, available and
//     misscheduled counts (status.go).
//
// The controller creates each pod unbound, with a node affinity that only
// its node matches; the scheduler binds it (seed 000, steps 9–11).
//
// Where things live:
//
//	file            what it holds
//	controller.go   the Controller: informers (DaemonSets, pods, nodes, ControllerRevisions), the index of daemon pods by node, handlers, Run
//	sync.go         sync: one DaemonSet's steps 1 to 5, in order
//	claim.go        the pods the DaemonSet controls, after adoption and release, grouped by node
//	revisions.go    step 1 and 4: the template as a ControllerRevision, its hash, the history beyond revisionHistoryLimit
//	placement.go    step 2's question: should a daemon pod run, or keep running, on this node
//	manage.go       step 2's work: create the missing pods and delete the superfluous, burstReplicas at a time
//	backoff.go      the delay before a node whose daemon pod keeps failing gets another
//	pods.go         the daemon pod: its template, labels and node affinity to its node
//	tolerations.go  the tolerations every daemon pod gets added
//	rolling.go      step 3: RollingUpdate within maxUnavailable or maxSurge
//	status.go       step 5: the status counts
package daemon

import (
	"context"
	"log/slog"
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
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
const ControllerName = "daemonset"

// EventComponent signs its events (source.component), as Kubernetes'
// controller signs them.
const EventComponent = "daemonset-controller"

// The reasons of its events, as Kubernetes gives them.
const (
	ReasonFailedDaemonPod    = "FailedDaemonPod"
	ReasonSucceededDaemonPod = "SucceededDaemonPod"
	ReasonFailedCreate       = "FailedCreate"
	ReasonSuccessfulCreate   = "SuccessfulCreate"
	ReasonFailedDelete       = "FailedDelete"
	ReasonSuccessfulDelete   = "SuccessfulDelete"
	ReasonSelectingAll       = "SelectingAll"
)

// DefaultWorkers is kube-controller-manager's --concurrent-daemonset-syncs.
const DefaultWorkers = 2

// Options tune the controller: Workers, 0 meaning DefaultWorkers.
type Options = controller.Options

var controllerKind = appsv1.SchemeGroupVersion.WithKind("DaemonSet")

// indexByTargetNode indexes daemon pods by the node they are for
// (targetNode): bound or not, so that a node's change finds them.
const indexByTargetNode = "daemonset.targetNode"

func targetNodeIndex(obj runtime.Object) []string {
	pod := obj.(*corev1.Pod)
	if ref := metav1.GetControllerOf(pod); ref == nil || ref.Kind != controllerKind.Kind {
		return nil
	}
	if node, err := targetNode(pod); err == nil {
		return []string{node}
	}
	return nil
}

// Controller keeps every DaemonSet's pods on its nodes.
type Controller struct {
	client    *client.Client
	dsets     *client.Informer
	pods      *client.Informer
	nodes     *client.Informer
	revisions *client.Informer
	history   *history.History
	queue     *workqueue.Queue[string] // DaemonSet keys, "namespace/name"
	workers   int
	exp       *controller.Expectations
	backoff   *backoff // of deleting failed pods, per DaemonSet and node
	rec       *record.Recorder
	log       *slog.Logger
	clock     clock.PassiveClock // "now" of availability (minReadySeconds) and back-off
}

// New is the DaemonSet controller on d's shared informers; it registers
// its handlers and indexes, so call it before they run.
func New(d controller.Deps, o Options) *Controller {
	c := &Controller{
		client: d.Client, dsets: d.Informers.For(client.DaemonSets), pods: d.Informers.For(client.Pods),
		nodes: d.Informers.For(client.Nodes), revisions: d.Informers.For(client.ControllerRevisions),
		queue: workqueue.NewNamed[string](d.Clock, ControllerName, d.QueueMetrics), workers: o.WorkersOr(DefaultWorkers),
		exp: controller.NewExpectations(d.Clock), backoff: newBackoff(d.Clock),
		rec: d.Recorder.WithComponent(EventComponent), log: d.Log.With("controller", ControllerName), clock: d.Clock,
	}
	c.history = history.NewHistory(d.Client, c.revisions)
	c.pods.Cache().AddIndex(client.IndexByOwnerUID, client.OwnerUIDIndex)
	c.pods.Cache().AddIndex(client.IndexByNamespace, client.NamespaceIndex)
	c.pods.Cache().AddIndex(indexByTargetNode, targetNodeIndex)
	c.dsets.AddHandler(client.Handler{
		OnAdd:    c.enqueue,
		OnUpdate: func(_, obj runtime.Object) { c.enqueue(obj) },
		OnDelete: c.enqueue, // sync forgets its expectations
	})
	c.pods.AddHandler(client.Handler{OnAdd: c.podAdded, OnUpdate: c.podUpdated, OnDelete: c.podDeleted})
	c.nodes.AddHandler(client.Handler{
		OnAdd: func(obj runtime.Object) { c.nodeChanged(obj.(*corev1.Node)) },
		OnUpdate: func(oldObj, obj runtime.Object) {
			old, node := oldObj.(*corev1.Node), obj.(*corev1.Node)
			// Only labels and taints decide placement (shouldIgnoreNodeUpdate).
			if !equality.Semantic.DeepEqual(old.Labels, node.Labels) || !equality.Semantic.DeepEqual(old.Spec.Taints, node.Spec.Taints) {
				c.nodeChanged(node)
			}
		},
		OnDelete: func(obj runtime.Object) { c.nodeDeleted(obj.(*corev1.Node)) },
	})
	c.revisions.AddHandler(client.Handler{OnAdd: c.revisionAdded, OnUpdate: c.revisionUpdated, OnDelete: c.revisionDeleted})
	return c
}

// Run starts the workers and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	client.RunWorkers(ctx, c.queue, c.workers, c.sync, c.log, "daemonset", c.dsets, c.pods, c.nodes, c.revisions)
}

func (c *Controller) enqueue(obj runtime.Object) { c.queue.Add(client.KeyOf(obj)) }

// resolve returns the DaemonSet a controller ownerReference names, if it
// is still that DaemonSet (same UID).
func (c *Controller) resolve(namespace string, ref *metav1.OwnerReference) (*appsv1.DaemonSet, bool) {
	if ref == nil || ref.Kind != controllerKind.Kind {
		return nil, false
	}
	obj, ok := c.dsets.Cache().Get(namespace + "/" + ref.Name)
	if !ok || obj.(*appsv1.DaemonSet).UID != ref.UID {
		return nil, false
	}
	return obj.(*appsv1.DaemonSet), true
}

// selecting returns the DaemonSets of namespace whose selector matches
// set: who may adopt an orphan.
func (c *Controller) selecting(namespace string, set labels.Set) []*appsv1.DaemonSet {
	var out []*appsv1.DaemonSet
	for _, obj := range c.dsets.Cache().List() {
		ds := obj.(*appsv1.DaemonSet)
		if ds.Namespace != namespace {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
		if err == nil && !sel.Empty() && sel.Matches(set) {
			out = append(out, ds)
		}
	}
	return out
}

// podAdded: a pod we created came back through the watch, or an orphan
// appeared that a DaemonSet may adopt.
func (c *Controller) podAdded(obj runtime.Object) {
	pod := obj.(*corev1.Pod)
	if pod.DeletionTimestamp != nil {
		// Seen for the first time already being deleted (a restart): a
		// deletion, not a creation to count.
		c.podDeleted(pod)
		return
	}
	if ref := metav1.GetControllerOf(pod); ref != nil {
		if ds, ok := c.resolve(pod.Namespace, ref); ok {
			c.exp.CreationObserved(client.KeyOf(ds))
			c.enqueue(ds)
		}
		return
	}
	for _, ds := range c.selecting(pod.Namespace, pod.Labels) {
		c.enqueue(ds)
	}
}

func (c *Controller) podUpdated(oldObj, obj runtime.Object) {
	old, pod := oldObj.(*corev1.Pod), obj.(*corev1.Pod)
	if pod.ResourceVersion == old.ResourceVersion {
		return
	}
	if pod.DeletionTimestamp != nil {
		// A graceful deletion began: for placement the pod is gone, and
		// its replacement need not wait for the kubelet to finish.
		c.podDeleted(pod)
		return
	}
	ref, oldRef := metav1.GetControllerOf(pod), metav1.GetControllerOf(old)
	refChanged := !reflect.DeepEqual(ref, oldRef)
	if refChanged && oldRef != nil {
		if ds, ok := c.resolve(old.Namespace, oldRef); ok {
			c.enqueue(ds)
		}
	}
	if ref != nil {
		ds, ok := c.resolve(pod.Namespace, ref)
		if !ok {
			return
		}
		c.enqueue(ds)
		// A pod that became ready becomes available minReadySeconds later,
		// which no event announces (plus a second against clock skew).
		if !podcondition.IsReady(old) && podcondition.IsReady(pod) && ds.Spec.MinReadySeconds > 0 {
			c.queue.AddAfter(client.KeyOf(ds), secondsOf(ds.Spec.MinReadySeconds)+time.Second)
		}
		return
	}
	if refChanged || !reflect.DeepEqual(pod.Labels, old.Labels) {
		for _, ds := range c.selecting(pod.Namespace, pod.Labels) {
			c.enqueue(ds)
		}
	}
}

func (c *Controller) podDeleted(obj runtime.Object) {
	pod := obj.(*corev1.Pod)
	ds, ok := c.resolve(pod.Namespace, metav1.GetControllerOf(pod))
	if !ok {
		return // nobody waits for an orphan
	}
	c.exp.DeletionObserved(client.KeyOf(ds), client.KeyOf(pod))
	c.enqueue(ds)
}

// nodeChanged queues the DaemonSets whose placement on node may have
// changed (Kubernetes' syncNodeUpdate): a pod is missing where one
// should run, one is there where it should not continue, or the
// DaemonSet counts misscheduled pods, which the change may have fixed.
func (c *Controller) nodeChanged(node *corev1.Node) {
	podsOf := map[string]int{} // DaemonSet key → its pods for node
	for _, obj := range c.pods.Cache().ByIndex(indexByTargetNode, node.Name) {
		pod := obj.(*corev1.Pod)
		podsOf[pod.Namespace+"/"+metav1.GetControllerOf(pod).Name]++
	}
	for _, obj := range c.dsets.Cache().List() {
		ds := obj.(*appsv1.DaemonSet)
		shouldRun, shouldContinue := placementOf(ds).check(node)
		scheduled := podsOf[client.KeyOf(ds)] > 0
		if (shouldRun && !scheduled) || (!shouldContinue && scheduled) || (scheduled && ds.Status.NumberMisscheduled > 0) {
			c.enqueue(ds)
		}
	}
}

// nodeDeleted queues the DaemonSets with pods for node: the unbound ones
// will never be scheduled, and sync deletes them.
func (c *Controller) nodeDeleted(node *corev1.Node) {
	for _, obj := range c.pods.Cache().ByIndex(indexByTargetNode, node.Name) {
		pod := obj.(*corev1.Pod)
		if ds, ok := c.resolve(pod.Namespace, metav1.GetControllerOf(pod)); ok {
			c.enqueue(ds)
		}
	}
}

// revisionAdded: an orphan revision may be adopted; our own creations
// need no sync (the one that created them goes on).
func (c *Controller) revisionAdded(obj runtime.Object) {
	rev := obj.(*appsv1.ControllerRevision)
	if rev.DeletionTimestamp != nil {
		c.revisionDeleted(rev)
		return
	}
	if metav1.GetControllerOf(rev) != nil {
		return
	}
	for _, ds := range c.selecting(rev.Namespace, rev.Labels) {
		c.enqueue(ds)
	}
}

func (c *Controller) revisionUpdated(oldObj, obj runtime.Object) {
	old, rev := oldObj.(*appsv1.ControllerRevision), obj.(*appsv1.ControllerRevision)
	if rev.ResourceVersion == old.ResourceVersion {
		return
	}
	ref, oldRef := metav1.GetControllerOf(rev), metav1.GetControllerOf(old)
	refChanged := !reflect.DeepEqual(ref, oldRef)
	if refChanged && oldRef != nil {
		if ds, ok := c.resolve(old.Namespace, oldRef); ok {
			c.enqueue(ds)
		}
	}
	if ref != nil {
		if ds, ok := c.resolve(rev.Namespace, ref); ok {
			c.enqueue(ds)
		}
		return
	}
	if refChanged || !reflect.DeepEqual(rev.Labels, old.Labels) {
		for _, ds := range c.selecting(rev.Namespace, rev.Labels) {
			c.enqueue(ds)
		}
	}
}

func (c *Controller) revisionDeleted(obj runtime.Object) {
	rev := obj.(*appsv1.ControllerRevision)
	if ds, ok := c.resolve(rev.Namespace, metav1.GetControllerOf(rev)); ok {
		c.enqueue(ds)
	}
}
