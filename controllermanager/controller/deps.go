// Package controller is what every controller of the controller manager is
// built from. Each controller package has the same shape:
//
//	func New(d controller.Deps, o Options) *Controller // asks d.Informers for what it watches, registers its handlers
//	func (c *Controller) Run(ctx context.Context)       // waits for those caches, runs o.Workers workers, blocks until ctx ends
//
// Run always blocks until ctx ends, as client-go's informer.Run does; a
// caller wanting it in the background starts it on a goroutine it owns
// (controllermanager.Run does, for every controller). No controller has
// a Start.
//
// Deps are made once per process and shared by every controller: one API
// client, one informer per resource (so the ReplicaSet, endpoints and
// disruption controllers share one list-watch of pods), one event queue,
// one log and one clock. Options are one controller's own tuning, and
// their zero value means Kubernetes' default.
//
// Where things live:
//
//	file             what it holds
//	deps.go          Deps (client, shared informers, recorder, log, clock), NewDeps and Run; Options and WorkersOr
//	podclaim.go      PodClaim: a controller adopts the orphan pods its selector matches and releases those it no longer does
//	expectations.go  Expectations: the creations and deletions a controller waits to see before it trusts its cache again
//	namespaces.go    NamespaceActive: no pods are made in a namespace that is going away
//	services.go      ForServicesSelecting: the Services that select a pod, for the Endpoints controllers
package controller

import (
	"cmp"
	"context"
	"log/slog"
	"sync"

	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/client/workqueue"
)

// Deps are what a controller is built from.
type Deps struct {
	Client *client.Client
	// Informers hands out the shared informers; a controller asks for its
	// own in New, before Deps.Run starts them.
	Informers *client.SharedInformers
	// Recorder posts Events; each controller signs them with its own name
	// (WithComponent), as "replicaset-controller" in Kubernetes.
	Recorder *record.Recorder
	// Log is tagged by each controller with its name ("controller", ...).
	Log *slog.Logger
	// Clock is every "now", deadline and timer of the controllers and of
	// their work queues: the widest interface any of them needs (the node
	// lifecycle controller ticks, the queues delay), which both
	// clock.RealClock and the tests' clocktesting.FakeClock implement.
	Clock clock.WithTickerAndDelayedExecution
	// QueueMetrics records the controllers' work queues (workqueue_*,
	// name=<controller>) in the controller manager's registry; nil
	// records nothing (tests).
	QueueMetrics *workqueue.MetricsProvider
}

// NewDeps makes the deps of one process talking to c: an empty shared
// informer factory and an event recorder signing as "controller-manager",
// both on clk; nil clk means the real clock.
func NewDeps(c *client.Client, log *slog.Logger, clk clock.WithTickerAndDelayedExecution) Deps {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return Deps{Client: c, Informers: client.NewSharedInformers(c, log),
		Recorder: record.New(c, "controller-manager", "", log).WithClock(clk), Log: log, Clock: clk}
}

// Run runs what the deps own, the shared informers and the sending of
// events; it blocks until ctx ends. Call it once every controller is
// built: New is where they ask for informers and add handlers, which must
// happen first.
func (d Deps) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { d.Informers.Run(ctx) }) // returns when ctx ends
	wg.Go(func() { d.Recorder.Run(ctx) })  // returns when ctx ends
	wg.Wait()
}

// Options are the tuning every controller takes; a controller package
// names them as its own Options, and can grow them there.
type Options struct {
	// Workers is how many keys are synced at once (each key by one
	// worker at a time); 0 means the controller's Kubernetes default.
	Workers int
}

// WorkersOr returns o.Workers, or def, the controller's default, when it
// is zero.
func (o Options) WorkersOr(def int) int { return cmp.Or(o.Workers, def) }
