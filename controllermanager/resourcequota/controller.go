// Package resourcequota is the resource quota controller: it keeps every
// ResourceQuota's status true (seed 003 八: how much of the shared
// cluster a namespace may take).
// status.hard is spec.hard, which is what the ResourceQuota admission
// plugin enforces, and status.used is recounted from the objects of the
// namespace. Admission charges each new object as it is created; this
// controller gives back what objects held when they go:
//
//   - at once (replenishment) when a counted object is deleted, a pod
//     finishes or changes scope, a Service changes type, a claim's
//     allocation changes;
//   - when a quota is created or its spec.hard changes;
//   - and every SyncPeriod for every quota, which corrects anything else
//     (a charge for a write that failed after admission, a status a user
//     overwrote).
//
// Pipeline: informer handlers → queue of quota keys → Run → workers →
// sync, which lists the counted objects from the informers' caches
// (quota.CalculateUsage) and writes status when it changed.
//
// Where things live:
//
//	file           what it holds
//	controller.go  the Controller: the counted resources, their handlers, the workers and the periodic full recount
//	sync.go        sync: recount one quota's status.used; which updates of a counted object change its usage
package resourcequota

import (
	"context"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/internal/quota"
)

// ControllerName is the name the controller manager runs this controller
// by, and the key of its service account
// (bootstrappolicy.ControllerServiceAccounts).
const ControllerName = "resourcequota-controller"

// logName tags its log lines (controller=resourcequota): the shorter form its
// log has always shown.
const logName = "resourcequota"

// DefaultWorkers is kube-controller-manager's
// --concurrent-resource-quota-syncs.
const DefaultWorkers = 5

// DefaultSyncPeriod is kube-controller-manager's
// --resource-quota-sync-period: how often every quota is recounted in
// full. Replenishment makes most recounts prompt; the full one is for
// what no event announces, and lists whole namespaces, so it is rare.
const DefaultSyncPeriod = 5 * time.Minute

// Options tune the controller; zero fields take the defaults.
type Options struct {
	Workers    int
	SyncPeriod time.Duration
}

// ResourceQuotas is the resource the controller keeps.
var ResourceQuotas = client.Resource{GroupVersion: corev1.SchemeGroupVersion, Name: "resourcequotas", Kind: "ResourceQuota", Namespaced: true,
	New: func() runtime.Object { return &corev1.ResourceQuota{} }, NewList: func() runtime.Object { return &corev1.ResourceQuotaList{} }}

// Counted are the resources whose objects the controller counts, each
// through its quota.Evaluator: the ones quota names without count/
// (pods, services, claims, configmaps, secrets, replicationcontrollers,
// resourcequotas), and those of mkube's other kinds that are worth a
// count/<resource>.<group>. Kubernetes counts every resource discovery
// lists; a quota on a resource missing here gets no status.used for it,
// and admission refuses to charge it ("status unknown"), as Kubernetes
// does for a resource it cannot count.
var Counted = []client.Resource{client.Pods, client.Services, client.PersistentVolumeClaims, client.ConfigMaps,
	client.Secrets, client.ReplicationControllers, ResourceQuotas, client.ServiceAccounts, client.Endpoints,
	client.ReplicaSets, client.Deployments, client.PodDisruptionBudgets, client.EndpointSlices}

// Controller keeps the ResourceQuotas' status.
type Controller struct {
	client     *client.Client
	quotas     *client.Informer
	counted    map[schema.GroupResource]*client.Informer
	evaluators []quota.Evaluator        // one per counted resource
	queue      *workqueue.Queue[string] // quota keys, "namespace/name"
	workers    int
	syncPeriod time.Duration
	clock      clock.WithTicker // the full resyncs' ticker, and "now" for pods past their grace period
	log        *slog.Logger
}

// New is the resource quota controller on d's shared informers; it
// registers its handlers, so call it before they run.
func New(d controller.Deps, o Options) *Controller {
	c := &Controller{client: d.Client, quotas: d.Informers.For(ResourceQuotas), counted: map[schema.GroupResource]*client.Informer{},
		queue: workqueue.NewNamed[string](d.Clock, ControllerName, d.QueueMetrics), workers: o.Workers, syncPeriod: o.SyncPeriod, clock: d.Clock,
		log: d.Log.With("controller", logName)}
	if c.workers <= 0 {
		c.workers = DefaultWorkers
	}
	if c.syncPeriod <= 0 {
		c.syncPeriod = DefaultSyncPeriod
	}
	c.quotas.Cache().AddIndex(client.IndexByNamespace, client.NamespaceIndex)
	c.quotas.AddHandler(client.Handler{
		OnAdd: c.enqueue,
		// Status changes are this controller's and admission's own:
		// only a new spec.hard needs a recount (Kubernetes ignores the
		// others too, and leaves them to the full resync).
		OnUpdate: func(old, obj runtime.Object) {
			if !quota.Equals(old.(*corev1.ResourceQuota).Spec.Hard, obj.(*corev1.ResourceQuota).Spec.Hard) {
				c.enqueue(obj)
			}
		},
		OnDelete: c.enqueue,
	})
	for _, res := range Counted {
		gr := schema.GroupResource{Group: res.GroupVersion.Group, Resource: res.Name}
		e := quota.For(gr)
		inf := d.Informers.For(res)
		inf.Cache().AddIndex(client.IndexByNamespace, client.NamespaceIndex)
		inf.AddHandler(client.Handler{
			OnUpdate: func(old, obj runtime.Object) {
				if usageChanged(gr, old, obj, c.clock.Now()) {
					c.replenish(e, obj)
				}
			},
			OnDelete: func(obj runtime.Object) { c.replenish(e, obj) },
		})
		c.counted[gr] = inf
		c.evaluators = append(c.evaluators, e)
	}
	return c
}

func (c *Controller) enqueue(obj runtime.Object) { c.queue.Add(client.KeyOf(obj)) }

// replenish queues the quotas of obj's namespace that count obj's
// resource: something they were charged for is gone or costs less.
func (c *Controller) replenish(e quota.Evaluator, obj runtime.Object) {
	for _, o := range c.quotas.Cache().ByIndex(client.IndexByNamespace, namespaceOf(obj)) {
		if q := o.(*corev1.ResourceQuota); len(e.Matching(quota.Names(q.Status.Hard))) > 0 {
			c.enqueue(q)
		}
	}
}

// Run recounts every quota each syncPeriod, and runs the workers; it
// blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	var wg sync.WaitGroup // owner: Run; the resync loop returns when ctx ends
	defer wg.Wait()
	wg.Go(func() { c.resyncEvery(ctx) })
	informers := []*client.Informer{c.quotas}
	for _, inf := range c.counted {
		informers = append(informers, inf)
	}
	client.RunWorkers(ctx, c.queue, c.workers, c.sync, c.log, "resourcequota", informers...)
}

// resyncEvery queues every quota at each tick of the sync period, until
// ctx ends (Kubernetes' enqueueAll).
func (c *Controller) resyncEvery(ctx context.Context) {
	t := c.clock.NewTicker(c.syncPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			for _, q := range c.quotas.Cache().List() {
				c.enqueue(q)
			}
		}
	}
}
