package kubelet

import (
	"context"
	"log/slog"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
)

// runtimeSync keeps a piece of the runtime's network (its routes, its
// Service rules) in step with informers' caches, as a node daemon does
// with the kernel's tables: after the first list and after each change
// it computes what the caches call for, and pushes it when it differs
// from what it last pushed. A push the runtime refuses is retried;
// one it does not implement (another runtime than mkube's) ends it.
type runtimeSync[T any] struct {
	what  string // for the logs: "pod network: routes"
	want  func() T
	equal func(a, b T) bool
	push  func(ctx context.Context, v T) error
	clock clock.Clock
	log   *slog.Logger
	kick  chan struct{}
}

// syncRetryInterval is how soon a push the runtime refused is tried
// again.
const syncRetryInterval = 5 * time.Second

func newRuntimeSync[T any](what string, want func() T, equal func(a, b T) bool, push func(context.Context, T) error, clk clock.Clock, log *slog.Logger) *runtimeSync[T] {
	return &runtimeSync[T]{what: what, want: want, equal: equal, push: push, clock: clk, log: log, kick: make(chan struct{}, 1)}
}

// changed says the caches changed in a way that matters.
func (r *runtimeSync[T]) changed() {
	select {
	case r.kick <- struct{}{}:
	default: // one is pending: it will read the latest caches
	}
}

// run pushes once the informers have listed, then after each change,
// until ctx ends. It waits for them by itself: a kubelet that may not
// list them (no binding) still runs its pods without this piece.
func (r *runtimeSync[T]) run(ctx context.Context, informers ...*client.Informer) {
	if !client.WaitForSync(ctx, informers...) {
		return
	}
	var set T
	first := true
	r.changed()
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
		cctx, cancel := context.WithTimeout(ctx, runtimeCheckTimeout)
		err := r.push(cctx, want)
		cancel()
		if status.Code(err) == codes.Unimplemented {
			r.log.Info(r.what+": the runtime has none", "err", err)
			return
		}
		if err != nil {
			r.log.Warn(r.what+": the runtime refused them, retrying", "err", err, "after", syncRetryInterval)
			select {
			case <-ctx.Done():
				return
			case <-r.clock.After(syncRetryInterval):
				r.changed()
			}
			continue
		}
		set, first = want, false
	}
}
