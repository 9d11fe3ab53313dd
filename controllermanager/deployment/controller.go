// Package deployment is the Deployment controller. A Deployment does not
// own pods: it owns ReplicaSets, one per version of its pod template, and
// the ReplicaSet controller makes the pods. This controller makes sure the
// ReplicaSet of the current template exists (named after the template's
// hash), moves the replicas from the old ReplicaSets to it as the
// strategy says, and keeps the old ones, scaled to zero, as revision
// history for `kubectl rollout undo`.
//
// Pipeline, as in Kubernetes' pkg/controller/deployment: informer handlers
// (a Deployment changed, or one of its ReplicaSets did, status included) →
// queue of Deployment keys → Run → workers → sync, which picks one path:
//
//   - spec.paused, or only spec.replicas changed (a "scaling event"):
//     resize the existing ReplicaSets, proportionally if a rollout is
//     half-way (scale.go); no new ReplicaSet is created or grown;
//   - strategy RollingUpdate (the default): one step of the rollout per
//     sync, grow the new ReplicaSet within maxSurge or shrink old ones
//     within maxUnavailable (rolling.go);
//   - strategy Recreate: scale every old ReplicaSet to zero, wait for
//     their pods to be gone, then scale the new one up (recreate.go).
//
// Every path ends by writing status: the counts `kubectl get deploy` shows
// and the Available and Progressing conditions `kubectl rollout status`
// and `kubectl describe` read (status.go, progress.go). A rollout moves on
// because the ReplicaSet controller writes ReplicaSet status as pods come
// and go: each of those writes requeues the owning Deployment, whose next
// sync takes the next step.
//
// Where things live:
//
//	file            what it holds
//	controller.go   the Controller: the annotations it writes, informers and handlers, Run
//	sync.go         sync: the ReplicaSets a Deployment owns, the new one and the old ones, and the path taken
//	claim.go        the ReplicaSets a Deployment controls, after adoption and release
//	hash.go         the pod-template-hash that names a template's ReplicaSet
//	replicasets.go  creating the new ReplicaSet and scaling ReplicaSets, with their annotations
//	scale.go        a scaling event: proportional resizing
//	rolling.go      one step of a RollingUpdate
//	recreate.go     one step of a Recreate
//	status.go       the status counts and the Available condition
//	progress.go     the Progressing condition and progressDeadlineSeconds
package deployment

import (
	"context"
	"log/slog"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
)

// Annotations and the label Kubernetes' Deployment controller writes;
// kubectl rollout reads them.
const (
	hashLabel                 = appsv1.DefaultDeploymentUniqueLabelKey // "pod-template-hash"
	revisionAnnotation        = "deployment.kubernetes.io/revision"
	desiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	maxReplicasAnnotation     = "deployment.kubernetes.io/max-replicas"
)

// ControllerName is the name the controller manager runs this controller
// by, and the key of its service account
// (bootstrappolicy.ControllerServiceAccounts).
const ControllerName = "deployment"

// EventComponent signs its events (source.component), as Kubernetes'
// controller signs them.
const EventComponent = "deployment-controller"

// The reasons of its events, as Kubernetes gives them.
const (
	ReasonScalingReplicaSet = "ScalingReplicaSet"
)

// DefaultWorkers is kube-controller-manager's --concurrent-deployment-syncs.
const DefaultWorkers = 5

// Options tune the controller: Workers, 0 meaning DefaultWorkers.
type Options = controller.Options

// Controller reconciles Deployments into ReplicaSets.
type Controller struct {
	client  *client.Client
	deploy  *client.Informer
	rsets   *client.Informer
	queue   *workqueue.Queue[string] // Deployment keys
	workers int
	rec     *record.Recorder
	log     *slog.Logger
	clock   clock.PassiveClock // "now" for condition times and the progress deadline
}

// New is the Deployment controller on d's shared informers; it registers
// its handlers, so call it before they run.
func New(d controller.Deps, o Options) *Controller {
	deploy, rsets := d.Informers.For(client.Deployments), d.Informers.For(client.ReplicaSets)
	ctrl := &Controller{client: d.Client, deploy: deploy, rsets: rsets, queue: workqueue.NewNamed[string](d.Clock, ControllerName, d.QueueMetrics),
		workers: o.WorkersOr(DefaultWorkers), rec: d.Recorder.WithComponent(EventComponent),
		log: d.Log.With("controller", ControllerName), clock: d.Clock}
	rsets.Cache().AddIndex(client.IndexByOwnerUID, client.OwnerUIDIndex)
	rsets.Cache().AddIndex(client.IndexByNamespace, client.NamespaceIndex)
	deploy.Cache().AddIndex(client.IndexByNamespace, client.NamespaceIndex)
	deploy.AddHandler(client.Handler{
		OnAdd:    ctrl.enqueue,
		OnUpdate: func(_, obj runtime.Object) { ctrl.enqueue(obj) },
		OnDelete: ctrl.enqueue,
	})
	// Every change of a ReplicaSet, its status included, requeues its
	// Deployment: a pod of the new ReplicaSet becoming available is what
	// lets a rolling update take its next step.
	rsets.AddHandler(client.Handler{
		OnAdd:    ctrl.enqueueOwner,
		OnUpdate: func(_, obj runtime.Object) { ctrl.enqueueOwner(obj) },
		OnDelete: ctrl.enqueueOwner,
	})
	return ctrl
}

func (c *Controller) enqueue(obj runtime.Object) { c.queue.Add(client.KeyOf(obj)) }

// enqueueOwner queues the Deployment controlling a ReplicaSet, or, for
// an orphan, every Deployment whose selector matches it (one may adopt it).
func (c *Controller) enqueueOwner(obj runtime.Object) {
	rs := obj.(*appsv1.ReplicaSet)
	ref := metav1.GetControllerOf(rs)
	if ref != nil {
		if ref.Kind == "Deployment" {
			c.queue.Add(rs.Namespace + "/" + ref.Name)
		}
		return
	}
	for _, o := range c.deploy.Cache().ByIndex(client.IndexByNamespace, rs.Namespace) {
		d := o.(*appsv1.Deployment)
		if sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err == nil && !sel.Empty() && sel.Matches(labels.Set(rs.Labels)) {
			c.enqueue(d)
		}
	}
}

// Run starts the workers and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	client.RunWorkers(ctx, c.queue, c.workers, c.sync, c.log, "deployment", c.deploy, c.rsets)
}
