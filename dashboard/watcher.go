package dashboard

import (
	"context"
	"log/slog"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
)

// HorizontalPodAutoscalers is autoscaling/v2's HPA, for the numbers view.
var HorizontalPodAutoscalers = client.Resource{GroupVersion: autoscalingv2.SchemeGroupVersion, Name: "horizontalpodautoscalers",
	Kind: "HorizontalPodAutoscaler", Namespaced: true,
	New:     func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} },
	NewList: func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscalerList{} }}

// watched are the resources the dashboard list-watches, as the
// controller manager, the scheduler and the kubelets do (seed 000 step
// 1): what the pages draw, and the records the 13 steps are read from
// (events, the pods' owners).
var watched = []client.Resource{client.Nodes, client.Pods, client.Events, client.Deployments, client.ReplicaSets, HorizontalPodAutoscalers}

// Watcher is the dashboard's list-watch client: one shared informer per
// resource, whose every change it publishes to the Hub and whose
// deliveries it notes in Sightings.
type Watcher struct {
	informers *client.SharedInformers
	byRes     map[string]*client.Informer // by resource name
	hub       *Hub
	sightings *Sightings
	clock     clock.PassiveClock
	log       *slog.Logger
}

// NewWatcher sets up the informers on c; Run starts them.
func NewWatcher(c *client.Client, hub *Hub, clk clock.PassiveClock, log *slog.Logger) *Watcher {
	w := &Watcher{informers: client.NewSharedInformers(c, log), byRes: map[string]*client.Informer{},
		hub: hub, sightings: NewSightings(), clock: clk, log: log}
	for _, res := range watched {
		inf := w.informers.For(res)
		inf.SetTransform(slim) // keep what the views read, not whole objects
		w.byRes[res.Name] = inf
		if res.Name == client.Events.Name {
			inf.Cache().AddIndex(client.IndexByNamespace, client.NamespaceIndex) // a pod's events, for its steps
		}
		inf.AddHandler(w.handler(res, inf))
	}
	return w
}

// Run list-watches until ctx ends. It blocks.
func (w *Watcher) Run(ctx context.Context) { w.informers.Run(ctx) }

// HasSynced reports whether every informer has listed once.
func (w *Watcher) HasSynced() bool { return w.informers.HasSynced() }

// WaitForSync blocks until every informer has listed once or ctx ends.
func (w *Watcher) WaitForSync(ctx context.Context) bool { return w.informers.WaitForSync(ctx) }

// Cache is the informer cache of res.
func (w *Watcher) Cache(res client.Resource) *client.Cache { return w.byRes[res.Name].Cache() }

// Sightings is when the dashboard's own watch received what.
func (w *Watcher) Sightings() *Sightings { return w.sightings }

// handler turns the informer's callbacks back into the watch event types
// they came from. The informer's first list calls OnAdd before it
// reports synced, so those are LISTED: the dashboard did not see them
// happen, only found them.
func (w *Watcher) handler(res client.Resource, inf *client.Informer) client.Handler {
	publish := func(typ string, old, obj runtime.Object) {
		now := w.clock.Now()
		m, err := meta.Accessor(obj)
		if err != nil {
			return
		}
		ch := Change{Type: typ, Kind: res.Kind, Namespace: m.GetNamespace(), Name: m.GetName(), RV: m.GetResourceVersion(), At: now}
		switch o := obj.(type) {
		case *corev1.Pod:
			ch.Pod = summarizePod(o)
			if was, ok := old.(*corev1.Pod); ok && was.Spec.NodeName != o.Spec.NodeName {
				ch.From = &was.Spec.NodeName
			}
			w.sightings.SeePod(typ, o, now)
		case *corev1.Node:
			ch.Node = summarizeNode(o)
		default:
			w.sightings.SeeObject(typ, m.GetUID(), now)
		}
		if typ == "DELETED" {
			w.sightings.Forget(m.GetUID())
		}
		w.hub.Publish(ch)
	}
	return client.Handler{
		OnAdd: func(obj runtime.Object) {
			if inf.HasSynced() {
				publish("ADDED", nil, obj)
			} else {
				publish("LISTED", nil, obj)
			}
		},
		OnUpdate: func(old, obj runtime.Object) { publish("MODIFIED", old, obj) },
		OnDelete: func(obj runtime.Object) { publish("DELETED", nil, obj) },
	}
}
