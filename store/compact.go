package store

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
)

// Compact discards etcd's history before rev. Watches and reads at older
// revisions then fail with "compacted", which clients see as 410 Gone.
func (s *Store) Compact(ctx context.Context, rev int64) error {
	_, err := s.client.Compact(ctx, rev)
	if errors.Is(err, rpctypes.ErrCompacted) {
		return nil // somebody (another API server) already compacted further
	}
	return err
}

// RunCompactor compacts history every interval, like kube-apiserver's
// --etcd-compaction-interval (default 5m there too). Each tick compacts to
// the revision seen at the previous tick, so a watcher always has at least
// one full interval to resume from its last resourceVersion before it must
// re-list. onCompacted, if set, learns each revision compacted to: the API
// server's watch caches forget the same history, so that a client sees
// the same 410 Gone whether it is served from a cache or from etcd.
func (s *Store) RunCompactor(ctx context.Context, interval time.Duration, log *slog.Logger, onCompacted func(rev int64)) {
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	var last int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if last > 0 {
			if err := s.Compact(ctx, last); err != nil {
				log.Warn("compaction failed", "rev", last, "err", err)
			} else {
				log.Info("compacted etcd history", "rev", last)
				if onCompacted != nil {
					onCompacted(last)
				}
			}
		}
		rev, err := s.Revision(ctx)
		if err != nil {
			log.Warn("read revision for compaction", "err", err)
			continue
		}
		last = rev
	}
}
