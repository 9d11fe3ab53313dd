// Package replicaset is the ReplicaSet controller: seed 000, step 6 — "the
// controller manager sees that fewer pods exist than the ReplicaSet wants,
// and creates them" — and its mirror image, deleting the surplus.
//
// Pipeline: informer handlers → queue of ReplicaSet keys → Run →
// workers (queue.Work, one item at a time) → sync. sync compares the pods the
// ReplicaSet owns (from the pod informer's cache) with spec.replicas,
// creates or deletes the difference, and writes status.
//
// Where things live:
//
//	file           what it holds
//	controller.go  the Controller, New for ReplicaSets and NewReplicationManager for ReplicationControllers, the handlers, Run
//	kind.go        kind: what differs between the two (resource, Go types, selectors), so that one controller serves both
//	sync.go        sync and manageReplicas: create or delete pods to close the gap, burstReplicas at a time
//	status.go      the status counts `kubectl get rs` shows, and when a ready pod becomes available
//	conditions.go  the ReplicaFailure condition, when the API server refused a create or delete
package replicaset

import (
	"context"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
)

// The names the controller manager runs the two controllers by (and the
// keys of their service accounts, bootstrappolicy.ControllerServiceAccounts),
// and the components their events are signed with, as Kubernetes has them.
const (
	ControllerName                   = "replicaset"
	EventComponent                   = "replicaset-controller"
	ReplicationManagerName           = "replicationcontroller"
	ReplicationManagerEventComponent = "replication-controller"
)

// The reasons of its events, as Kubernetes gives them.
const (
	ReasonFailedCreate     = "FailedCreate"
	ReasonSuccessfulCreate = "SuccessfulCreate"
	ReasonFailedDelete     = "FailedDelete"
	ReasonSuccessfulDelete = "SuccessfulDelete"
)

// DefaultWorkers is kube-controller-manager's --concurrent-replicaset-syncs
// (and --concurrent-rc-syncs, for ReplicationControllers): five ReplicaSets
// sync at once, each one worker at a time.
const DefaultWorkers = 5

// Options tune one controller: Workers, 0 meaning DefaultWorkers.
type Options = controller.Options

// Controller keeps every ReplicaSet's pods at spec.replicas.
type Controller struct {
	kind    kind
	client  *client.Client
	rsets   *client.Informer
	pods    *client.Informer
	queue   *workqueue.Queue[string] // ReplicaSet keys, "namespace/name"
	workers int
	exp     *controller.Expectations
	rec     *record.Recorder
	log     *slog.Logger
	clock   clock.PassiveClock // "now" for minReadySeconds
}

// New is the ReplicaSet controller on d's shared informers; it registers
// its handlers, so call it before they run.
func New(d controller.Deps, o Options) *Controller {
	return newController(replicaSets, d, o, ControllerName, EventComponent)
}

// NewReplicationManager is the same controller for ReplicationControllers.
func NewReplicationManager(d controller.Deps, o Options) *Controller {
	return newController(replicationControllers, d, o, ReplicationManagerName, ReplicationManagerEventComponent)
}

// newController builds the controller of kind k; name tags its logs and
// component signs its events, as Kubernetes names them.
func newController(k kind, d controller.Deps, o Options, name, component string) *Controller {
	rsets, pods := d.Informers.For(k.res), d.Informers.For(client.Pods)
	ctrl := &Controller{kind: k, client: d.Client, rsets: rsets, pods: pods, queue: workqueue.NewNamed[string](d.Clock, name, d.QueueMetrics),
		workers: o.WorkersOr(DefaultWorkers), exp: controller.NewExpectations(d.Clock),
		rec: d.Recorder.WithComponent(component), log: d.Log.With("controller", name), clock: d.Clock}
	pods.Cache().AddIndex(client.IndexByOwnerUID, client.OwnerUIDIndex)
	pods.Cache().AddIndex(client.IndexByNamespace, client.NamespaceIndex)
	rsets.AddHandler(client.Handler{
		OnAdd:    ctrl.enqueue,
		OnUpdate: func(_, obj runtime.Object) { ctrl.enqueue(obj) },
		OnDelete: ctrl.enqueue,
	})
	pods.AddHandler(client.Handler{OnAdd: ctrl.podAdded, OnUpdate: ctrl.podUpdated, OnDelete: ctrl.podDeleted})
	return ctrl
}

func (c *Controller) enqueue(obj runtime.Object) { c.queue.Add(client.KeyOf(obj)) }

// ownerKey returns the key of the ReplicaSet that controls pod, if any.
func (c *Controller) ownerKey(pod *corev1.Pod) (string, bool) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != c.kind.gvk.Kind {
		return "", false
	}
	return pod.Namespace + "/" + ref.Name, true
}

// podAdded: a pod we created has come back through the watch (step 8 seen
// from this side), or an orphan appeared that a ReplicaSet may adopt.
func (c *Controller) podAdded(obj runtime.Object) {
	pod := obj.(*corev1.Pod)
	if key, ok := c.ownerKey(pod); ok {
		if pod.DeletionTimestamp != nil {
			c.exp.DeletionObserved(key, client.KeyOf(pod))
		} else {
			c.exp.CreationObserved(key)
		}
		c.queue.Add(key)
		return
	}
	c.enqueueSelecting(pod)
}

func (c *Controller) podUpdated(oldObj, obj runtime.Object) {
	old, pod := oldObj.(*corev1.Pod), obj.(*corev1.Pod)
	key, owned := c.ownerKey(pod)
	if owned && pod.DeletionTimestamp != nil && old.DeletionTimestamp == nil {
		// A graceful deletion began: for counting, the pod is already gone.
		c.exp.DeletionObserved(key, client.KeyOf(pod))
	}
	if oldKey, ok := c.ownerKey(old); ok && oldKey != key {
		c.queue.Add(oldKey)
	}
	if owned {
		c.queue.Add(key)
	} else {
		c.enqueueSelecting(pod)
	}
}

func (c *Controller) podDeleted(obj runtime.Object) {
	pod := obj.(*corev1.Pod)
	if key, ok := c.ownerKey(pod); ok {
		c.exp.DeletionObserved(key, client.KeyOf(pod))
		c.queue.Add(key)
	}
}

// enqueueSelecting queues every ReplicaSet whose selector matches an orphan
// pod, so it can be adopted.
func (c *Controller) enqueueSelecting(pod *corev1.Pod) {
	if pod.DeletionTimestamp != nil {
		return
	}
	for _, obj := range c.rsets.Cache().List() {
		rs := c.kind.asReplicaSet(obj)
		if rs.Namespace != pod.Namespace {
			continue
		}
		if sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector); err == nil && !sel.Empty() && sel.Matches(labels.Set(pod.Labels)) {
			c.queue.Add(client.KeyOf(rs))
		}
	}
}

// Run starts the workers and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	client.RunWorkers(ctx, c.queue, c.workers, c.sync, c.log, "replicaset", c.rsets, c.pods)
}

// resyncAfter re-checks a ReplicaSet whose pods become available only
// after minReadySeconds, which no watch event will announce.
func (c *Controller) resyncAfter(key string, d time.Duration) { c.queue.AddAfter(key, d) }
