// Package garbagecollector deletes objects whose owners are gone, as
// Kubernetes' garbage collector does with metadata.ownerReferences:
//
//   - Background deletion (the default): the owner is removed at once; its
//     dependents, now pointing at a missing owner, are deleted here.
//   - Orphan: the API server keeps the owner with the "orphan" finalizer;
//     this controller removes the owner from its dependents'
//     ownerReferences, then removes the finalizer, and the owner goes.
//   - Foreground: the owner is kept with the "foregroundDeletion"
//     finalizer until this controller has deleted every dependent.
//
// A Deployment owns ReplicaSets which own Pods, so deleting a Deployment
// cascades down two levels, one level per pass.
//
// Where things live:
//
//	file          what it holds
//	collector.go  the Collector: the monitored resources, one informer each, their handlers and the workers
//	sync.go       sync: an owner being deleted (orphan or foreground finalizer), or a dependent whose owners are gone
package garbagecollector

import (
	"context"
	"log/slog"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
)

// item names one object to look at: its resource and cache key.
type item struct {
	resource string
	key      string
}

// ControllerName is the name the controller manager runs this controller
// by, and the key of its service account
// (bootstrappolicy.ControllerServiceAccounts).
const ControllerName = "garbagecollector"

// DefaultWorkers is kube-controller-manager's --concurrent-gc-syncs: more
// than other controllers, as deleting a Deployment fans out to many pods.
const DefaultWorkers = 20

// Options tune the collector: Workers, 0 meaning DefaultWorkers.
type Options = controller.Options

// monitoredResources are the resources whose objects own or are owned in
// mkube: a Deployment owns ReplicaSets, which own pods, as
// ReplicationControllers do; a Service owns its EndpointSlices.
// Kubernetes' collector monitors every resource discovery lists instead.
var monitoredResources = []client.Resource{client.Pods, client.ReplicaSets, client.ReplicationControllers, client.Deployments,
	client.Services, client.EndpointSlices,
	client.DaemonSets,            // a DaemonSet owns pods and revisions
	client.CronJobs, client.Jobs, // a CronJob owns Jobs, which own pods
	// A pod owns the certificate requests its kubelet made.
	client.PodCertificateRequests,
	client.StatefulSets, client.ControllerRevisions, client.PersistentVolumeClaims} // a StatefulSet owns pods, revisions and (whenDeleted=Delete) claims

// Collector watches every resource that can own or be owned.
type Collector struct {
	client    *client.Client
	monitored map[string]*monitor // by resource name
	queue     *workqueue.Queue[item]
	workers   int
	log       *slog.Logger
}

// monitor is one watched resource.
type monitor struct {
	res      client.Resource
	informer *client.Informer
}

// New is the garbage collector on d's shared informers of the monitored
// resources; it registers its handlers, so call it before they run.
func New(d controller.Deps, o Options) *Collector {
	gc := &Collector{client: d.Client, monitored: map[string]*monitor{}, queue: workqueue.NewNamed[item](d.Clock, ControllerName, d.QueueMetrics),
		workers: o.WorkersOr(DefaultWorkers), log: d.Log.With("controller", ControllerName)}
	for _, res := range monitoredResources {
		inf := d.Informers.For(res)
		gc.monitored[res.Name] = &monitor{res: res, informer: inf}
		inf.Cache().AddIndex(client.IndexByOwnerUID, client.OwnerUIDIndex)
		inf.AddHandler(client.Handler{
			OnAdd:    func(obj runtime.Object) { gc.enqueue(res, obj) },
			OnUpdate: func(old, obj runtime.Object) { gc.ownersChanged(old, obj); gc.enqueue(res, obj) },
			OnDelete: func(obj runtime.Object) { gc.ownerDeleted(obj) },
		})
	}
	return gc
}

// enqueue looks at an object that has owners (is it an orphan now?) or is
// being deleted with a finalizer this controller serves.
func (gc *Collector) enqueue(res client.Resource, obj runtime.Object) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	if len(m.GetOwnerReferences()) > 0 || (m.GetDeletionTimestamp() != nil && pendingFinalizer(m) != "") {
		gc.queue.Add(item{resource: res.Name, key: client.KeyOf(obj)})
	}
}

// ownerDeleted queues the dependents of an object that is gone.
func (gc *Collector) ownerDeleted(obj runtime.Object) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	for _, dep := range gc.dependents(string(m.GetUID())) {
		gc.queue.Add(dep)
	}
	// An owner deleted in the foreground waits for this object: look again.
	gc.queueOwners(m)
}

// ownersChanged queues the owners old named when obj's ownerReferences
// differ: an owner waiting for old to go may have stopped depending on it.
func (gc *Collector) ownersChanged(old, obj runtime.Object) {
	om, err1 := meta.Accessor(old)
	m, err2 := meta.Accessor(obj)
	if err1 != nil || err2 != nil || equality.Semantic.DeepEqual(om.GetOwnerReferences(), m.GetOwnerReferences()) {
		return
	}
	gc.queueOwners(om)
}

// queueOwners queues each owner m names, of a kind this collector watches.
func (gc *Collector) queueOwners(m metav1.Object) {
	for _, ref := range m.GetOwnerReferences() {
		if res, ok := gc.resourceFor(ref); ok {
			key := ref.Name
			if res.Namespaced {
				key = m.GetNamespace() + "/" + ref.Name
			}
			gc.queue.Add(item{resource: res.Name, key: key})
		}
	}
}

// dependents lists the objects that name uid among their owners.
func (gc *Collector) dependents(uid string) []item {
	var out []item
	for name, mon := range gc.monitored {
		for _, obj := range mon.informer.Cache().ByIndex(client.IndexByOwnerUID, uid) {
			out = append(out, item{resource: name, key: client.KeyOf(obj)})
		}
	}
	return out
}

// Run starts the workers and blocks until ctx ends.
func (gc *Collector) Run(ctx context.Context) {
	var infs []*client.Informer
	for _, m := range gc.monitored {
		infs = append(infs, m.informer)
	}
	client.RunWorkers(ctx, gc.queue, gc.workers, gc.sync, gc.log, "object", infs...)
}

func (i item) String() string { return i.resource + " " + i.key }
