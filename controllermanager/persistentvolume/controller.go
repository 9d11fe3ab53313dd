package persistentvolume

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/controllermanager/persistentvolume/volumeplugin"
)

// DefaultSyncPeriod is kube-controller-manager's
// --pvclaimbinder-sync-period: how often every claim and volume is synced
// again. It bounds how long a Pending claim waits for a volume created
// after it, and how soon a failed reclaim is tried again, at a cost of
// one pass over the caches.
const DefaultSyncPeriod = 15 * time.Second

// ControllerName is the name the controller manager runs this controller
// by, and the key of its service account
// (bootstrappolicy.ControllerServiceAccounts).
const ControllerName = "persistentvolume-binder-controller"

// EventComponent signs its events (source.component), as Kubernetes'
// controller signs them.
const EventComponent = "persistentvolume-controller"

// Options tune the controller.
type Options struct {
	// NodeRoot and NFSRoot are the kubelets' --node-root and --nfs-root:
	// where the nodes' disks and the NFS exports are on this machine, so
	// that Recycle and Delete reach a volume's data and the provisioner
	// creates it. An empty one cannot be reached: reclaiming a volume
	// there fails (the volume is Failed), and so does provisioning.
	NodeRoot, NFSRoot string
	// SyncPeriod, 0 meaning DefaultSyncPeriod.
	SyncPeriod time.Duration
}

// Controller binds claims to volumes and reclaims released volumes.
type Controller struct {
	binder *binder
	queue  *workqueue.Queue[item]
	synced []*client.Informer // Run waits for their first list
	period time.Duration
	clock  clock.WithTicker
	log    *slog.Logger
}

// New is the PersistentVolume controller on d's shared informers of
// volumes, claims, StorageClasses, pods (indexed by the claims they use)
// and nodes; it registers its handlers, so call it before they run.
func New(d controller.Deps, o Options) *Controller {
	volumes, claims := d.Informers.For(client.PersistentVolumes), d.Informers.For(client.PersistentVolumeClaims)
	classes, pods, nodes := d.Informers.For(client.StorageClasses), d.Informers.For(client.Pods), d.Informers.For(client.Nodes)
	pods.Cache().AddIndex(IndexPodsByClaim, PodClaimIndex)
	log := d.Log.With("controller", ControllerName)
	c := &Controller{queue: workqueue.NewNamed[item](d.Clock, ControllerName, d.QueueMetrics), synced: []*client.Informer{volumes, claims, classes, pods, nodes},
		period: cmp.Or(o.SyncPeriod, DefaultSyncPeriod), clock: d.Clock, log: log}
	c.binder = &binder{api: clientAPI{d.Client}, volumes: newStore[*corev1.PersistentVolume](), claims: newStore[*corev1.PersistentVolumeClaim](),
		classes: classes.Cache(), pods: pods.Cache(), nodes: nodes.Cache(), host: volumeplugin.Host{NodeRoot: o.NodeRoot, NFSRoot: o.NFSRoot},
		rec: d.Recorder.WithComponent(EventComponent), clock: d.Clock, log: log, enqueue: c.queue.Add}
	volumes.AddHandler(client.Handler{
		OnAdd:    c.volumeChanged,
		OnUpdate: func(_, obj runtime.Object) { c.volumeChanged(obj) },
		OnDelete: c.volumeDeleted,
	})
	claims.AddHandler(client.Handler{
		OnAdd:    c.claimChanged,
		OnUpdate: func(_, obj runtime.Object) { c.claimChanged(obj) },
		OnDelete: c.claimDeleted,
	})
	classes.AddHandler(client.Handler{OnAdd: c.classAdded})
	return c
}

// classAdded syncs the Pending claims of a class that has just appeared,
// so a claim applied together with its class (one kubectl apply) is
// provisioned now rather than at the next resync; Kubernetes' binder
// waits for the resync.
func (c *Controller) classAdded(obj runtime.Object) {
	name := obj.(*storagev1.StorageClass).Name
	for _, pvc := range c.binder.claims.list() {
		if pvc.Status.Phase == corev1.ClaimPending && storagehelpers.GetPersistentVolumeClaimClass(pvc) == name {
			c.queue.Add(item{claimItem, client.KeyOf(pvc)})
		}
	}
}

// volumeChanged syncs a volume the informer reports, unless the store
// already has a newer copy (the controller's own write).
func (c *Controller) volumeChanged(obj runtime.Object) {
	if pv := obj.(*corev1.PersistentVolume); c.binder.volumes.update(pv) {
		c.queue.Add(item{volumeItem, pv.Name})
	}
}

// volumeDeleted syncs the volume's claim, which is Lost if it was bound.
func (c *Controller) volumeDeleted(obj runtime.Object) {
	pv := obj.(*corev1.PersistentVolume)
	c.binder.volumes.remove(pv.Name)
	if pv.Spec.ClaimRef != nil {
		c.queue.Add(item{claimItem, claimKey(pv.Spec.ClaimRef)})
	}
}

func (c *Controller) claimChanged(obj runtime.Object) {
	if pvc := obj.(*corev1.PersistentVolumeClaim); c.binder.claims.update(pvc) {
		c.queue.Add(item{claimItem, client.KeyOf(pvc)})
	}
}

// claimDeleted syncs the claim's volume: it is Released now.
func (c *Controller) claimDeleted(obj runtime.Object) {
	pvc := obj.(*corev1.PersistentVolumeClaim)
	c.binder.claims.remove(client.KeyOf(pvc))
	if pvc.Spec.VolumeName != "" {
		c.queue.Add(item{volumeItem, pvc.Spec.VolumeName})
	}
}

// Run syncs with one worker (binding is not reentrant: see the package
// doc), and queues every claim and volume again every SyncPeriod; it
// blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { c.resync(ctx) }) // returns when ctx ends
	client.RunWorkers(ctx, c.queue, 1, c.binder.sync, c.log, "object", c.synced...)
	wg.Wait()
}

// resync queues everything every period.
func (c *Controller) resync(ctx context.Context) {
	t := c.clock.NewTicker(c.period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			for _, pvc := range c.binder.claims.list() {
				c.queue.Add(item{claimItem, client.KeyOf(pvc)})
			}
			for _, pv := range c.binder.volumes.list() {
				c.queue.Add(item{volumeItem, pv.Name})
			}
		}
	}
}
