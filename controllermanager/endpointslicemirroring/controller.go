// Package endpointslicemirroring is Kubernetes' EndpointSlice mirroring
// controller: a Service without a selector has the Endpoints its user
// writes (pointing at a database outside the cluster, say), and this
// controller copies each such Endpoints into EndpointSlices, labelled
// endpointslice.kubernetes.io/managed-by=endpointslicemirroring-controller.k8s.io,
// so that what reads only slices (kube-proxy, DNS) sees those endpoints
// too. Services with a selector are the endpointslice controller's.
//
// Pipeline: an Endpoints, Service or mirrored slice event queues the
// Endpoints' key → sync compares the slices it should have
// (desiredSlices) with the mirrored slices the cache holds, and creates,
// updates or deletes the difference.
//
// Where things live:
//
//	file           what it holds
//	controller.go  the Controller: informers, handlers, Run and sync
//	desired.go     desiredSlices: the slices an Endpoints is mirrored into
package endpointslicemirroring

import (
	"context"
	"log/slog"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
)

// ManagedBy is the managed-by label of the slices this controller
// writes; it touches no others.
const ManagedBy = "endpointslicemirroring-controller.k8s.io"

// skipMirrorLabel on an Endpoints keeps it from being mirrored (the
// endpoints controller sets it on those it writes for selectors).
const skipMirrorLabel = "endpointslice.kubernetes.io/skip-mirror"

// ControllerName is the name the controller manager runs this controller
// by, and the key of its service account
// (bootstrappolicy.ControllerServiceAccounts).
const ControllerName = "endpointslicemirroring"

// DefaultWorkers is kube-controller-manager's
// --mirroring-concurrent-service-endpoint-syncs.
const DefaultWorkers = 5

// Options tune the controller: Workers, 0 meaning DefaultWorkers.
type Options = controller.Options

// Controller keeps mirrored EndpointSlices in step with Endpoints.
type Controller struct {
	client    *client.Client
	endpoints *client.Informer
	services  *client.Informer
	slices    *client.Informer
	queue     *workqueue.Queue[string] // Endpoints (and Service) keys
	workers   int
	log       *slog.Logger
}

// indexByMirroredService indexes the slices this controller manages by
// "<namespace>/<kubernetes.io/service-name>".
const indexByMirroredService = "mirroredService"

func mirroredServiceIndex(obj runtime.Object) []string {
	s := obj.(*discoveryv1.EndpointSlice)
	if name := s.Labels[discoveryv1.LabelServiceName]; name != "" && s.Labels[discoveryv1.LabelManagedBy] == ManagedBy {
		return []string{s.Namespace + "/" + name}
	}
	return nil
}

// New is the mirroring controller on d's shared informers; it registers
// its handlers, so call it before they run.
func New(d controller.Deps, o Options) *Controller {
	c := &Controller{client: d.Client, endpoints: d.Informers.For(client.Endpoints), services: d.Informers.For(client.Services),
		slices: d.Informers.For(client.EndpointSlices), queue: workqueue.NewNamed[string](d.Clock, ControllerName, d.QueueMetrics),
		workers: o.WorkersOr(DefaultWorkers), log: d.Log.With("controller", ControllerName)}
	c.slices.Cache().AddIndex(indexByMirroredService, mirroredServiceIndex)
	enqueue := client.Handler{
		OnAdd:    func(obj runtime.Object) { c.queue.Add(client.KeyOf(obj)) },
		OnUpdate: func(_, obj runtime.Object) { c.queue.Add(client.KeyOf(obj)) },
		OnDelete: func(obj runtime.Object) { c.queue.Add(client.KeyOf(obj)) },
	}
	c.endpoints.AddHandler(enqueue)
	c.services.AddHandler(enqueue) // a Service gaining a selector, or going, ends the mirroring
	mirrored := func(obj runtime.Object) {
		if keys := mirroredServiceIndex(obj); len(keys) > 0 {
			c.queue.Add(keys[0])
		}
	}
	c.slices.AddHandler(client.Handler{OnAdd: mirrored, OnUpdate: func(_, obj runtime.Object) { mirrored(obj) }, OnDelete: mirrored})
	return c
}

// Run starts the workers and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	client.RunWorkers(ctx, c.queue, c.workers, c.sync, c.log, "endpoints", c.endpoints, c.services, c.slices)
}

// sync mirrors one Endpoints, or removes its mirrored slices when it
// should not be mirrored (gone, skip-mirror, no Service, or a Service
// with a selector).
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, _, _ := strings.Cut(key, "/")
	var want []desiredSlice
	if ep, ok := c.mirrorable(key); ok {
		want = desiredSlices(ep)
	}
	have := map[string][]*discoveryv1.EndpointSlice{}
	for _, obj := range c.slices.Cache().ByIndex(indexByMirroredService, key) {
		if s := obj.(*discoveryv1.EndpointSlice); s.DeletionTimestamp == nil {
			have[keyOf(s)] = append(have[keyOf(s)], s)
		}
	}
	var stale []*discoveryv1.EndpointSlice // more than one slice of a key: the rest go
	for _, d := range want {
		existing := have[d.key]
		delete(have, d.key)
		if len(existing) == 0 {
			out := &discoveryv1.EndpointSlice{}
			if err := c.client.Create(ctx, client.EndpointSlices, ns, d.slice, out); err != nil {
				return err
			}
			c.log.Info("mirrored endpoints into a new endpointslice", "endpoints", key, "endpointslice", out.Name, "addresses", len(out.Endpoints))
			continue
		}
		stale = append(stale, existing[1:]...)
		if cur := existing[0]; !sameContent(cur, d.slice) {
			next := cur.DeepCopy()
			next.Labels, next.Annotations, next.Endpoints, next.Ports = d.slice.Labels, d.slice.Annotations, d.slice.Endpoints, d.slice.Ports
			if err := c.client.Update(ctx, client.EndpointSlices, ns, cur.Name, next, nil); err != nil {
				return err
			}
			c.log.Info("mirrored an endpoints change", "endpoints", key, "endpointslice", cur.Name, "addresses", len(next.Endpoints))
		}
	}
	for _, unwanted := range have {
		stale = append(stale, unwanted...)
	}
	for _, s := range stale {
		uid := s.UID
		err := c.client.Delete(ctx, client.EndpointSlices, ns, s.Name, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		c.log.Info("deleted a mirrored endpointslice", "endpoints", key, "endpointslice", s.Name)
	}
	return nil
}

// mirrorable is the Endpoints of key if it is to be mirrored.
func (c *Controller) mirrorable(key string) (*corev1.Endpoints, bool) {
	obj, ok := c.endpoints.Cache().Get(key)
	if !ok {
		return nil, false
	}
	ep := obj.(*corev1.Endpoints)
	if ep.Labels[skipMirrorLabel] == "true" || ep.DeletionTimestamp != nil {
		return nil, false
	}
	svc, ok := c.services.Cache().Get(key)
	if !ok || svc.(*corev1.Service).Spec.Selector != nil {
		return nil, false
	}
	return ep, true
}

func sameContent(a, b *discoveryv1.EndpointSlice) bool {
	return reflect.DeepEqual(a.Endpoints, b.Endpoints) && reflect.DeepEqual(a.Ports, b.Ports) &&
		reflect.DeepEqual(a.Labels, b.Labels) && reflect.DeepEqual(emptyIfNil(a.Annotations), emptyIfNil(b.Annotations))
}

func emptyIfNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
