package workqueue

import (
	"context"
	"fmt"
	"log/slog"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// ProcessNext is the body of every controller's processNextItem (the
// sample-controller pipeline Run → runWorker → processNextItem → sync):
// take one item, sync it, and settle it.
//
//   - Success: Forget, so its next failure starts from the shortest backoff.
//   - Failure: AddRateLimited, retried after its backoff. A Conflict — a
//     write lost to another writer under optimistic concurrency — is
//     normal and logged at info level; other errors are warnings.
//   - ctx ended: neither; the component is stopping.
//
// It returns false once the queue is shut down: the worker should return.
// kind names the items in the log ("replicaset", "pod", ...).
func (q *Queue[T]) ProcessNext(ctx context.Context, sync func(context.Context, T) error, log *slog.Logger, kind string) bool {
	item, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(item)
	err := sync(ctx, item)
	switch {
	case err == nil:
		q.Forget(item)
	case ctx.Err() != nil:
	default:
		level := slog.LevelWarn
		if apierrors.IsConflict(err) {
			level = slog.LevelInfo
		}
		log.Log(ctx, level, "sync failed, will retry", kind, fmt.Sprint(item), "err", err, "retries", q.NumRequeues(item))
		q.AddRateLimited(item)
	}
	return true
}

// Work is one worker: it processes items with ProcessNext until the queue
// shuts down. A controller's Run starts as many as it wants in parallel.
func (q *Queue[T]) Work(ctx context.Context, sync func(context.Context, T) error, log *slog.Logger, kind string) {
	for q.ProcessNext(ctx, sync, log, kind) {
	}
}
