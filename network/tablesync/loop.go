package tablesync

import (
	"context"
	"log/slog"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
)

// Loop keeps a piece of the runtime's network (its routes, its Service
// rules) in step with informers' caches, as a node daemon does with the
// kernel's tables: after the first list and after each change it
// computes what the caches call for, and pushes it when it differs from
// what it last pushed. A push the runtime refuses is retried; one it
// does not implement (another runtime than mkube's) ends it. Run blocks.
type Loop[T any] struct {
	what  string // for the logs: "pod network: routes"
	want  func() T
	equal func(a, b T) bool
	push  func(ctx context.Context, v T) error
	clock clock.Clock
	log   *slog.Logger
	// kick holds one pending change: Changed sends without blocking, Run
	// receives. Never closed.
	kick chan struct{}
}

// retryInterval is how soon a push the runtime refused is tried again.
const retryInterval = 5 * time.Second

// pushTimeout bounds one push: the kubelet's runtimeCheckTimeout, how
// long it waits for any of the runtime's quick calls. A runtime that
// takes longer is retried as one that refused.
const pushTimeout = 5 * time.Second

// New is a Loop that names itself what in its logs, computes the table
// with want, compares tables with equal and gives one to the runtime
// with push.
func New[T any](what string, want func() T, equal func(a, b T) bool, push func(context.Context, T) error, clk clock.Clock, log *slog.Logger) *Loop[T] {
	return &Loop[T]{what: what, want: want, equal: equal, push: push, clock: clk, log: log, kick: make(chan struct{}, 1)}
}

// Changed says the caches changed in a way that matters.
func (r *Loop[T]) Changed() {
	select {
	case r.kick <- struct{}{}:
	default: // one is pending: it will read the latest caches
	}
}

// Run pushes once the informers have listed, then after each change,
// until ctx ends. It waits for them by itself: a kubelet that may not
// list them (no binding) still runs its pods without this piece.
func (r *Loop[T]) Run(ctx context.Context, informers ...*client.Informer) {
	if !client.WaitForSync(ctx, informers...) {
		return
	}
	var set T
	first := true
	r.Changed()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
		}
		want := r.want()
		if !first && r.equal(want, set) {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, pushTimeout)
		err := r.push(cctx, want)
		cancel()
		if status.Code(err) == codes.Unimplemented {
			r.log.Info(r.what+": the runtime has none", "err", err)
			return
		}
		if err != nil {
			r.log.Warn(r.what+": the runtime refused them, retrying", "err", err, "after", retryInterval)
			select {
			case <-ctx.Done():
				return
			case <-r.clock.After(retryInterval):
				r.Changed()
			}
			continue
		}
		set, first = want, false
	}
}
