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
package garbagecollector

import (
	"context"
	"log/slog"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/workqueue"
)

// item names one object to look at: its resource and cache key.
type item struct {
	resource string
	key      string
}

// Collector watches every resource that can own or be owned.
type Collector struct {
	client    *client.Client
	monitored map[string]*monitor // by resource name
	queue     *workqueue.Queue[item]
	log       *slog.Logger
}

// monitor is one watched resource.
type monitor struct {
	res      client.Resource
	informer *client.Informer
}

// Source is a resource to monitor and its shared informer.
type Source struct {
	Resource client.Resource
	Informer *client.Informer
}

// New registers handlers on the given shared informers (pods, replicasets,
// deployments, ...); call before they run.
func New(c *client.Client, log *slog.Logger, sources ...Source) *Collector {
	gc := &Collector{client: c, monitored: map[string]*monitor{}, queue: workqueue.New[item](nil),
		log: log.With("controller", "garbagecollector")}
	for _, src := range sources {
		res, inf := src.Resource, src.Informer
		m := &monitor{res: res, informer: inf}
		gc.monitored[res.Name] = m
		inf.Cache().AddIndex(client.IndexByOwnerUID, client.OwnerUIDIndex)
		inf.AddHandler(client.Handler{
			OnAdd:    func(obj runtime.Object) { gc.enqueue(res, obj) },
			OnUpdate: func(_, obj runtime.Object) { gc.enqueue(res, obj) },
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

// Run starts workers and blocks until ctx ends.
func (gc *Collector) Run(ctx context.Context, workers int) {
	var infs []*client.Informer
	for _, m := range gc.monitored {
		infs = append(infs, m.informer)
	}
	client.RunWorkers(ctx, gc.queue, workers, gc.sync, gc.log, "object", infs...)
}

func (i item) String() string { return i.resource + " " + i.key }
