// Package endpointslice is the EndpointSlice controller: for every Service
// with a selector it keeps discovery.k8s.io/v1 EndpointSlices, labelled
// kubernetes.io/service-name=<service> and owned by the Service, listing
// each selected pod that has an IP as one endpoint with its address, its
// ready, serving and terminating conditions, its node and zone, and the
// Service's target ports resolved against the pod's container ports.
// Pods whose ports resolve differently are in different slices; a slice
// holds at most MaxEndpointsPerSlice endpoints. This is the scalable
// form of the Endpoints the endpoints controller keeps: a change to one
// pod rewrites one slice of 100 endpoints, not a list of all of them.
//
// Pipeline: a Service, pod or slice event queues the Service's key →
// sync reads the Service, its pods and its slices from the caches →
// desiredGroups computes the endpoints → reconcile plans the writes →
// sync sends them (creates, then updates, then deletes) and remembers its
// creates and deletes until the cache shows them.
//
// Services without a selector are not this controller's: their users
// write Endpoints, which endpointslicemirroring copies into slices.
// Out of scope: topology hints. A deleted Service's slices go through
// the garbage collector, following their ownerReferences.
//
// Where things live:
//
//	file            what it holds
//	controller.go   the Controller: its tuning constants, informers and handlers, Run
//	sync.go         sync and apply: read, compute, plan, send (creates, updates, deletes)
//	desired.go      desiredGroups: the endpoints a Service's pods make, grouped by address type and ports
//	reconcile.go    reconcile: the plan that brings the existing slices to the desired groups, writing nothing already right
//	tracker.go      the creates and deletes sent but not yet in the cache
//	triggertime.go  endpoints.kubernetes.io/last-change-trigger-time: when the change a sync publishes happened
package endpointslice

import (
	"cmp"
	"context"
	"log/slog"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
)

// ControllerName is the name the controller manager runs this controller
// by, and the key of its service account
// (bootstrappolicy.ControllerServiceAccounts).
const ControllerName = "endpointslice"

// EventComponent signs its events (source.component), as Kubernetes'
// controller signs them.
const EventComponent = "endpoint-slice-controller"

// The reasons of its events, as Kubernetes gives them.
const (
	ReasonFailedToUpdateEndpointSlices = "FailedToUpdateEndpointSlices"
)

// DefaultWorkers is kube-controller-manager's
// --concurrent-service-endpoint-syncs.
const DefaultWorkers = 5

// DefaultMaxEndpointsPerSlice is --max-endpoints-per-slice: small enough
// that one pod's change rewrites little, large enough that most Services
// fit in one slice. The flag accepts up to 1000, the API's limit.
const DefaultMaxEndpointsPerSlice = 100

const maxEndpointsPerSliceLimit = 1000

// sliceChangeSyncDelay is kube-controller-manager's
// endpointSliceChangeMinSyncDelay: a slice event syncs its Service only
// after a second, so the burst of events that follows our own writes is
// one sync, not one each.
const sliceChangeSyncDelay = time.Second

// ManagedBy is the endpointslice.kubernetes.io/managed-by label of
// the slices this controller manages; it touches no others.
const ManagedBy = "endpointslice-controller.k8s.io"

// Options tune the controller: Workers and MaxEndpointsPerSlice, 0
// meaning their defaults.
type Options struct {
	Workers              int
	MaxEndpointsPerSlice int
}

// Controller keeps EndpointSlices in step with Services and pods.
type Controller struct {
	client      *client.Client
	services    *client.Informer
	pods        *client.Informer
	slices      *client.Informer
	nodes       *client.Informer
	queue       *workqueue.Queue[string] // Service keys
	tracker     *tracker
	triggers    *triggerTimes
	rec         *record.Recorder
	workers     int
	maxPerSlice int
	log         *slog.Logger
}

// indexByService indexes slices by "<namespace>/<kubernetes.io/service-name>".
const indexByService = "serviceName"

func serviceIndex(obj runtime.Object) []string {
	s := obj.(*discoveryv1.EndpointSlice)
	if name := s.Labels[discoveryv1.LabelServiceName]; name != "" {
		return []string{s.Namespace + "/" + name}
	}
	return nil
}

// New is the EndpointSlice controller on d's shared informers; it
// registers its handlers, so call it before they run.
func New(d controller.Deps, o Options) *Controller {
	c := &Controller{client: d.Client, services: d.Informers.For(client.Services), pods: d.Informers.For(client.Pods),
		slices: d.Informers.For(client.EndpointSlices), nodes: d.Informers.For(client.Nodes),
		queue: workqueue.NewNamed[string](d.Clock, ControllerName, d.QueueMetrics), tracker: newTracker(d.Clock), triggers: newTriggerTimes(),
		rec: d.Recorder.WithComponent(EventComponent), workers: cmp.Or(o.Workers, DefaultWorkers),
		maxPerSlice: min(max(cmp.Or(o.MaxEndpointsPerSlice, DefaultMaxEndpointsPerSlice), 1), maxEndpointsPerSliceLimit),
		log:         d.Log.With("controller", ControllerName)}
	c.pods.Cache().AddIndex(client.IndexByNamespace, client.NamespaceIndex)
	c.services.Cache().AddIndex(client.IndexByNamespace, client.NamespaceIndex)
	c.slices.Cache().AddIndex(indexByService, serviceIndex)
	c.services.AddHandler(client.Handler{
		OnAdd:    func(obj runtime.Object) { c.queue.Add(client.KeyOf(obj)) },
		OnUpdate: func(_, obj runtime.Object) { c.queue.Add(client.KeyOf(obj)) },
		OnDelete: func(obj runtime.Object) { c.queue.Add(client.KeyOf(obj)) },
	})
	c.pods.AddHandler(client.Handler{
		OnAdd:    func(obj runtime.Object) { c.enqueueServicesOf(obj.(*corev1.Pod)) },
		OnUpdate: func(old, obj runtime.Object) { c.enqueueServicesOf(old.(*corev1.Pod), obj.(*corev1.Pod)) },
		OnDelete: func(obj runtime.Object) { c.enqueueServicesOf(obj.(*corev1.Pod)) },
	})
	// A slice of ours that changes or goes (a user deleted it, say) brings
	// its Service back, to be put right; its events are also how the
	// tracker learns that the cache has caught up.
	c.slices.AddHandler(client.Handler{
		OnAdd:    func(obj runtime.Object) { c.enqueueServiceOf(obj.(*discoveryv1.EndpointSlice), false) },
		OnUpdate: func(_, obj runtime.Object) { c.enqueueServiceOf(obj.(*discoveryv1.EndpointSlice), false) },
		OnDelete: func(obj runtime.Object) { c.enqueueServiceOf(obj.(*discoveryv1.EndpointSlice), true) },
	})
	return c
}

// enqueueServicesOf queues the Services selecting any of these pod states.
func (c *Controller) enqueueServicesOf(pods ...*corev1.Pod) {
	controller.ForServicesSelecting(c.services, c.queue.Add, pods...)
}

func (c *Controller) enqueueServiceOf(s *discoveryv1.EndpointSlice, deleted bool) {
	keys := serviceIndex(s)
	if len(keys) == 0 || s.Labels[discoveryv1.LabelManagedBy] != ManagedBy {
		return
	}
	if deleted {
		c.tracker.deletedSlice(keys[0], client.KeyOf(s))
	}
	c.queue.AddAfter(keys[0], sliceChangeSyncDelay)
}

// Run starts the workers and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	client.RunWorkers(ctx, c.queue, c.workers, c.sync, c.log, "service", c.services, c.pods, c.slices, c.nodes)
}

// slicesOf lists the slices this controller manages for a Service,
// but those already being deleted: they are as good as gone, and
// planning around them would wait for them forever.
func (c *Controller) slicesOf(key string) []*discoveryv1.EndpointSlice {
	var out []*discoveryv1.EndpointSlice
	for _, obj := range c.slices.Cache().ByIndex(indexByService, key) {
		if s := obj.(*discoveryv1.EndpointSlice); s.Labels[discoveryv1.LabelManagedBy] == ManagedBy && s.DeletionTimestamp == nil {
			out = append(out, s)
		}
	}
	return out
}

// podsOf lists the pods the Service selects.
func (c *Controller) podsOf(svc *corev1.Service) []*corev1.Pod {
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	var out []*corev1.Pod
	for _, obj := range c.pods.Cache().ByIndex(client.IndexByNamespace, svc.Namespace) {
		if pod := obj.(*corev1.Pod); sel.Matches(labels.Set(pod.Labels)) {
			out = append(out, pod)
		}
	}
	return out
}

// zoneOf is a node's topology.kubernetes.io/zone label.
func (c *Controller) zoneOf(node string) string {
	if node == "" {
		return ""
	}
	obj, ok := c.nodes.Cache().Get(node)
	if !ok {
		return ""
	}
	return obj.(*corev1.Node).Labels[corev1.LabelTopologyZone]
}

func splitKey(key string) (namespace, name string) {
	namespace, name, _ = strings.Cut(key, "/")
	return namespace, name
}
