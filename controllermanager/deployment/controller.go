// Package deployment is the Deployment controller. A Deployment does not
// own pods: it owns ReplicaSets, one per version of its pod template, and
// the ReplicaSet controller makes the pods. This controller makes sure the
// ReplicaSet of the current template exists (named after the template's
// hash) with spec.replicas, and that older ones are scaled to zero and
// kept as revision history for `kubectl rollout undo`.
//
// This is the foundation's Deployment controller: a new template replaces
// the old ReplicaSet at once. The gradual RollingUpdate within maxSurge
// and maxUnavailable is not implemented yet.
package deployment

import (
	"context"
	"log/slog"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/client/workqueue"
)

// Annotations and the label Kubernetes' Deployment controller writes;
// kubectl rollout reads them.
const (
	hashLabel                 = appsv1.DefaultDeploymentUniqueLabelKey // "pod-template-hash"
	revisionAnnotation        = "deployment.kubernetes.io/revision"
	desiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	maxReplicasAnnotation     = "deployment.kubernetes.io/max-replicas"
)

// Controller reconciles Deployments into ReplicaSets.
type Controller struct {
	client *client.Client
	deploy *client.Informer
	rsets  *client.Informer
	queue  *workqueue.Queue[string] // Deployment keys
	rec    *record.Recorder
	log    *slog.Logger
}

// New registers handlers on shared informers; call before they run.
func New(c *client.Client, deploy, rsets *client.Informer, rec *record.Recorder, log *slog.Logger) *Controller {
	ctrl := &Controller{client: c, deploy: deploy, rsets: rsets, queue: workqueue.New[string](nil), rec: rec,
		log: log.With("controller", "deployment")}
	rsets.Cache().AddIndex(client.IndexByOwnerUID, client.OwnerUIDIndex)
	deploy.AddHandler(client.Handler{
		OnAdd:    ctrl.enqueue,
		OnUpdate: func(_, obj runtime.Object) { ctrl.enqueue(obj) },
		OnDelete: ctrl.enqueue,
	})
	rsets.AddHandler(client.Handler{
		OnAdd:    ctrl.enqueueOwner,
		OnUpdate: func(_, obj runtime.Object) { ctrl.enqueueOwner(obj) },
		OnDelete: ctrl.enqueueOwner,
	})
	return ctrl
}

func (c *Controller) enqueue(obj runtime.Object) { c.queue.Add(client.KeyOf(obj)) }

// enqueueOwner queues the Deployment controlling a ReplicaSet.
func (c *Controller) enqueueOwner(obj runtime.Object) {
	rs := obj.(*appsv1.ReplicaSet)
	if ref := metav1.GetControllerOf(rs); ref != nil && ref.Kind == "Deployment" {
		c.queue.Add(rs.Namespace + "/" + ref.Name)
	}
}

// Run starts workers and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	defer c.queue.ShutDown()
	if !client.WaitForSync(ctx, c.deploy, c.rsets) {
		return
	}
	c.log.Info("caches synced, starting workers", "workers", workers)
	for range workers {
		go c.queue.Work(ctx, c.sync, c.log, "deployment")
	}
	<-ctx.Done()
}
