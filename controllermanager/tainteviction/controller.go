package tainteviction

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
)

// lister is what sync reads: an informer's Cache in the controller
// manager, a map in the unit tests.
type lister interface {
	Get(key string) (runtime.Object, bool)
	ByIndex(index, value string) []runtime.Object
}

// ControllerName is the name the controller manager runs this controller
// by, and the key of its service account
// (bootstrappolicy.ControllerServiceAccounts).
const ControllerName = "taint-eviction-controller"

// EventComponent signs its events (source.component), as Kubernetes'
// controller signs them.
const EventComponent = "taint-eviction-controller"

// DefaultWorkers is Kubernetes' UpdateWorkerSize for this controller (it
// has no flag): eight pods decided at once, each sync a cache read and at
// most one DELETE.
const DefaultWorkers = 8

// Options tune the controller: Workers, 0 meaning DefaultWorkers.
type Options = controller.Options

// Controller evicts pods from nodes whose NoExecute taints they do not
// tolerate, now or when their tolerationSeconds run out.
type Controller struct {
	client  *client.Client
	nodes   lister
	pods    lister                     // indexed by client.IndexPodsByNode
	synced  []*client.Informer         // Run waits for their first list
	queue   *workqueue.Queue[string]   // pod keys, "namespace/name"
	workers int                        // concurrent syncs
	clock   clock.WithDelayedExecution // the queue's AddAfter timers and every deadline
	rec     *record.Recorder
	log     *slog.Logger

	mu        sync.Mutex            // guards countdown: workers sync different pods at once
	countdown map[string]*countdown // pod key → its pending eviction
}

// New is the taint eviction controller on d's shared node and pod
// informers: it adds the pods-by-node index and registers its handlers,
// so call it before the informers run. Its countdowns run on d.Clock.
func New(d controller.Deps, o Options) *Controller {
	nodes, pods := d.Informers.For(client.Nodes), d.Informers.For(client.Pods)
	pods.Cache().AddIndex(client.IndexPodsByNode, client.PodNodeIndex)
	ctrl := newController(d, nodes.Cache(), pods.Cache(), o)
	ctrl.synced = []*client.Informer{nodes, pods}
	nodes.AddHandler(client.Handler{
		OnAdd:    func(obj runtime.Object) { ctrl.nodeChanged(nil, obj.(*corev1.Node)) },
		OnUpdate: func(old, obj runtime.Object) { ctrl.nodeChanged(old.(*corev1.Node), obj.(*corev1.Node)) },
		OnDelete: func(obj runtime.Object) { ctrl.nodeChanged(obj.(*corev1.Node), nil) },
	})
	pods.AddHandler(client.Handler{
		OnAdd:    func(obj runtime.Object) { ctrl.podChanged(nil, obj.(*corev1.Pod)) },
		OnUpdate: func(old, obj runtime.Object) { ctrl.podChanged(old.(*corev1.Pod), obj.(*corev1.Pod)) },
		OnDelete: func(obj runtime.Object) { ctrl.podChanged(obj.(*corev1.Pod), nil) },
	})
	return ctrl
}

// newController is the controller reading nodes and pods from any lister:
// the unit tests pass maps they write themselves, and no informers.
func newController(d controller.Deps, nodes, pods lister, o Options) *Controller {
	return &Controller{client: d.Client, nodes: nodes, pods: pods, queue: workqueue.NewNamed[string](d.Clock, ControllerName, d.QueueMetrics),
		workers: o.WorkersOr(DefaultWorkers), clock: d.Clock,
		rec: d.Recorder.WithComponent(EventComponent), log: d.Log.With("controller", ControllerName),
		countdown: map[string]*countdown{}}
}

// nodeChanged queues the pods of a node whose NoExecute taints changed:
// one added or removed, or the node itself added or deleted (old or node
// nil). Other node updates, such as the kubelet's status reports every
// few seconds, change nothing here and are ignored.
func (c *Controller) nodeChanged(old, node *corev1.Node) {
	var name string
	var before, after []corev1.Taint
	if old != nil {
		name, before = old.Name, noExecuteTaints(old.Spec.Taints)
	}
	if node != nil {
		name, after = node.Name, noExecuteTaints(node.Spec.Taints)
	}
	added, removed := diffTaints(before, after)
	switch {
	case node == nil:
		if len(before) > 0 {
			c.log.Info("tainted node deleted", "node", name)
		}
	case old != nil && len(added)+len(removed) == 0:
		return
	}
	if node != nil {
		for _, t := range added {
			c.log.Info("node has a NoExecute taint: its pods that do not tolerate it will be evicted", "node", name, "taint", t)
		}
		for _, t := range removed {
			c.log.Info("NoExecute taint removed from node", "node", name, "taint", t)
		}
	}
	for _, pod := range c.pods.ByIndex(client.IndexPodsByNode, name) {
		c.queue.Add(client.KeyOf(pod))
	}
}

// diffTaints names the taints in after but not before, and the reverse.
func diffTaints(before, after []corev1.Taint) (added, removed []string) {
	ids := func(taints []corev1.Taint) []string {
		out := make([]string, len(taints))
		for i, t := range taints {
			out[i] = taintID(t)
		}
		return out
	}
	b, a := ids(before), ids(after)
	for _, id := range a {
		if !slices.Contains(b, id) {
			added = append(added, id)
		}
	}
	for _, id := range b {
		if !slices.Contains(a, id) {
			removed = append(removed, id)
		}
	}
	return added, removed
}

// podChanged queues a pod bound to a node when what decides its fate
// changed: its node, its tolerations, its deletion; or it was added or
// deleted (old or pod nil). Status updates are ignored.
func (c *Controller) podChanged(old, pod *corev1.Pod) {
	if old != nil && pod != nil && old.UID == pod.UID && old.Spec.NodeName == pod.Spec.NodeName &&
		(old.DeletionTimestamp == nil) == (pod.DeletionTimestamp == nil) &&
		equality.Semantic.DeepEqual(old.Spec.Tolerations, pod.Spec.Tolerations) {
		return
	}
	p := pod
	if p == nil {
		p = old
	}
	if p.Spec.NodeName == "" && (old == nil || old.Spec.NodeName == "") {
		return // not on a node yet: taints are the scheduler's business
	}
	c.queue.Add(client.KeyOf(p))
}

// Run starts workers and blocks until ctx ends. Stopping shuts the queue
// down; timers still pending then add to a queue that drops them.
func (c *Controller) Run(ctx context.Context) {
	client.RunWorkers(ctx, c.queue, c.workers, c.sync, c.log, "pod", c.synced...)
}
