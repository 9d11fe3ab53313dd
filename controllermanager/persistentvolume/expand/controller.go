// Package expand grows volumes whose claims ask for more storage
// (allowVolumeExpansion, seed 003 §五). In Kubernetes the
// persistentvolume-expander grows the storage through the volume's
// plugin, or hands the claim to a CSI driver's external-resizer, which
// records the new size in the volume (spec.capacity) and, when the node
// needs no filesystem resize, in the claim (status.capacity). The volumes
// mkube.io/hostpath provisions are directories: there is nothing to grow
// on disk, nor on a node, so this controller plays the resizer's part in
// two writes, volume then claim, with the resizer's events. Only a bound
// claim of a class that allows expansion gets here: the
// PersistentVolumeClaimResize admission plugin refuses the others.
//
// It all lives in controller.go: New registers the informer handlers, Run
// runs the workers until ctx ends, sync does one item.
package expand

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/controllermanager/persistentvolume/volumeplugin"
)

// ControllerName is the name the controller manager runs this controller
// by, and the key of its service account
// (bootstrappolicy.ControllerServiceAccounts).
const ControllerName = "persistentvolume-expander-controller"

// The components its events are signed with: the external resizer's for
// the resize itself, Kubernetes' expand controller's for handing it over.
const (
	ResizerEventComponent = "external-resizer " + volumeplugin.ProvisionerName
	ExpandEventComponent  = "volume_expand"
)

// The reasons of its events, as Kubernetes and the external resizer give
// them.
const (
	ReasonExternalExpanding      = "ExternalExpanding"
	ReasonResizing               = "Resizing"
	ReasonVolumeResizeSuccessful = "VolumeResizeSuccessful"
)

// Controller resizes the volumes of claims that ask for more.
type Controller struct {
	client  *client.Client
	claims  *client.Informer
	volumes *client.Informer
	queue   *workqueue.Queue[string] // claim keys
	resizer *record.Recorder         // the events of the driver's resizer
	expand  *record.Recorder         // the events of Kubernetes' expand controller
	log     *slog.Logger
}

// New is the expander on d's shared informers of claims and volumes;
// call it before they run.
func New(d controller.Deps) *Controller {
	c := &Controller{client: d.Client, claims: d.Informers.For(client.PersistentVolumeClaims), volumes: d.Informers.For(client.PersistentVolumes),
		queue: workqueue.NewNamed[string](d.Clock, ControllerName, d.QueueMetrics), resizer: d.Recorder.WithComponent(ResizerEventComponent),
		expand: d.Recorder.WithComponent(ExpandEventComponent), log: d.Log.With("controller", ControllerName)}
	changed := func(obj runtime.Object) {
		if pvc := obj.(*corev1.PersistentVolumeClaim); wantsMore(pvc) {
			c.queue.Add(client.KeyOf(pvc))
		}
	}
	c.claims.AddHandler(client.Handler{OnAdd: changed, OnUpdate: func(_, obj runtime.Object) { changed(obj) }})
	return c
}

// wantsMore: a bound claim asking for more storage than it has.
func wantsMore(pvc *corev1.PersistentVolumeClaim) bool {
	if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName == "" {
		return false
	}
	asked, has := pvc.Spec.Resources.Requests[corev1.ResourceStorage], pvc.Status.Capacity[corev1.ResourceStorage]
	return asked.Cmp(has) > 0
}

// Run syncs with one worker and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	client.RunWorkers(ctx, c.queue, 1, c.sync, c.log, "claim", c.claims, c.volumes)
}

// sync grows the claim's volume to what it asks for. Errors are retried;
// a write that went through is not written again (each step checks).
func (c *Controller) sync(ctx context.Context, key string) error {
	obj, ok := c.claims.Cache().Get(key)
	if !ok {
		return nil
	}
	pvc := obj.(*corev1.PersistentVolumeClaim)
	if !wantsMore(pvc) {
		return nil
	}
	vobj, ok := c.volumes.Cache().Get(pvc.Spec.VolumeName)
	if !ok {
		return fmt.Errorf("volume %s of claim %s is not in the cache yet", pvc.Spec.VolumeName, key)
	}
	pv := vobj.(*corev1.PersistentVolume)
	if pv.Annotations[storagehelpers.AnnDynamicallyProvisioned] != volumeplugin.ProvisionerName {
		c.expand.Event(pvc, corev1.EventTypeWarning, ReasonExternalExpanding,
			"Ignoring the PVC: didn't find a plugin capable of expanding the volume; waiting for an external controller to process this PVC.")
		return nil
	}
	asked := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	c.resizer.Event(pvc, corev1.EventTypeNormal, ReasonResizing, "External resizer is resizing volume %s", pv.Name)
	if size := pv.Spec.Capacity[corev1.ResourceStorage]; size.Cmp(asked) < 0 {
		next := pv.DeepCopy()
		next.Spec.Capacity[corev1.ResourceStorage] = asked
		if err := c.client.Update(ctx, client.PersistentVolumes, "", pv.Name, next, nil); err != nil {
			return fmt.Errorf("grow volume %s: %w", pv.Name, err)
		}
	}
	next := pvc.DeepCopy()
	next.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: asked}
	next.Status.AllocatedResources = corev1.ResourceList{corev1.ResourceStorage: asked}
	if err := c.client.UpdateStatus(ctx, client.PersistentVolumeClaims, pvc.Namespace, pvc.Name, next, nil); err != nil {
		return fmt.Errorf("claim %s: status: %w", key, err)
	}
	c.resizer.Event(pvc, corev1.EventTypeNormal, ReasonVolumeResizeSuccessful, "Resize volume succeeded")
	c.log.Info("volume resized", "claim", key, "volume", pv.Name, "size", asked.String())
	return nil
}
