package store

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"k8s.io/utils/clock"
)

// Option configures a Store at New.
type Option func(*Store)

// WithClock makes the compactor wait on clk instead of the real clock, so
// a test can step through its intervals (k8s.io/utils/clock/testing).
func WithClock(clk clock.Clock) Option { return func(s *Store) { s.clock = clk } }

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
//
// Like kube-apiserver's compactor it waits a whole interval after each
// tick's work (After on the store's clock) rather than on a ticker: two
// compactions are at least an interval apart however slow one is, and a
// test on a fake clock can tell the compactor is idle when it waits.
func (s *Store) RunCompactor(ctx context.Context, interval time.Duration, log *slog.Logger, onCompacted func(rev int64)) {
	if interval <= 0 {
		return
	}
	var last int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.clock.After(interval):
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
