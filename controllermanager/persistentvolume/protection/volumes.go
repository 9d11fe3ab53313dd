package protection

import (
	"context"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/internal/storagepolicy"
)

// VolumeController keeps volumes that are bound: the pv-protection
// controller.
type VolumeController struct {
	client  *client.Client
	volumes *client.Informer
	queue   *workqueue.Queue[string] // volume names
	log     *slog.Logger
}

// NewVolumeController is the pv-protection controller on d's shared
// informer of volumes; call it before it runs.
func NewVolumeController(d controller.Deps) *VolumeController {
	c := &VolumeController{client: d.Client, volumes: d.Informers.For(client.PersistentVolumes),
		queue: workqueue.NewNamed[string](d.Clock, VolumeControllerName, d.QueueMetrics), log: d.Log.With("controller", VolumeControllerName)}
	changed := func(obj runtime.Object) {
		pv := obj.(*corev1.PersistentVolume)
		if needsFinalizer(pv, storagepolicy.VolumeProtectionFinalizer) || deletionCandidate(pv, storagepolicy.VolumeProtectionFinalizer) {
			c.queue.Add(pv.Name)
		}
	}
	c.volumes.AddHandler(client.Handler{OnAdd: changed, OnUpdate: func(_, obj runtime.Object) { changed(obj) }})
	return c
}

// Run syncs with one worker and blocks until ctx ends.
func (c *VolumeController) Run(ctx context.Context) {
	client.RunWorkers(ctx, c.queue, 1, c.sync, c.log, "volume", c.volumes)
}

// sync lets a deleted volume go once it is not Bound (the binder says so
// in its phase), and gives the finalizer to a volume without it.
func (c *VolumeController) sync(ctx context.Context, name string) error {
	obj, ok := c.volumes.Cache().Get(name)
	if !ok {
		return nil
	}
	pv := obj.(*corev1.PersistentVolume).DeepCopy()
	switch {
	case deletionCandidate(pv, storagepolicy.VolumeProtectionFinalizer):
		if pv.Status.Phase == corev1.VolumeBound {
			c.log.Info("keeping the volume: it is bound", "volume", name)
			return nil
		}
		if err := updateFinalizers(ctx, pv, storagepolicy.VolumeProtectionFinalizer, false, c.update); err != nil {
			return err
		}
		c.log.Info("removed the protection finalizer of a volume no longer bound", "volume", name)
	case needsFinalizer(pv, storagepolicy.VolumeProtectionFinalizer):
		return updateFinalizers(ctx, pv, storagepolicy.VolumeProtectionFinalizer, true, c.update)
	}
	return nil
}

func (c *VolumeController) update(ctx context.Context, pv *corev1.PersistentVolume) error {
	return c.client.Update(ctx, client.PersistentVolumes, "", pv.Name, pv, nil)
}
