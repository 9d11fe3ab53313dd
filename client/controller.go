package client

import (
	"context"
	"log/slog"

	"github.com/mkube/mkube/client/workqueue"
)

// RunWorkers is the Run of every controller: wait until its informers have
// listed once (so no decision is made on a partial cache), then run
// workers that sync the queue's items, until ctx ends; the queue is shut
// down on the way out, which ends the workers. kind names the items in the
// log ("replicaset", "pod", ...).
func RunWorkers[T comparable](ctx context.Context, q *workqueue.Queue[T], workers int, sync func(context.Context, T) error,
	log *slog.Logger, kind string, informers ...*Informer) {
	defer q.ShutDown()
	if !WaitForSync(ctx, informers...) {
		return
	}
	log.Info("caches synced, starting workers", "workers", workers)
	for range workers {
		go q.Work(ctx, sync, log, kind) // returns when the queue shuts down
	}
	<-ctx.Done()
}
