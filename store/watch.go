package store

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// EventType says what happened to a key.
type EventType int

const (
	Put    EventType = iota // created or updated; Event.Created tells which
	Delete                  // removed; Event.PrevValue holds its last value
	// Progress carries no key: etcd promises that every change up to Rev
	// under the watched prefix has been delivered. The API server turns it
	// into BOOKMARK events.
	Progress
)

// Event is one change under a watched prefix, in revision order.
type Event struct {
	Type      EventType
	Key       string
	Value     []byte // the new value (Put)
	PrevValue []byte // the value before this change (update and Delete)
	Rev       int64  // the revision of this change
	Created   bool   // a Put that created the key
}

// CompactedError means the requested start revision is older than etcd's
// compaction: the history needed is gone and the caller must re-list.
type CompactedError struct {
	Requested, Compacted int64
}

func (e *CompactedError) Error() string {
	return fmt.Sprintf("too old resource version: %d (%d)", e.Requested, e.Compacted)
}

// Watch streams every change under prefix with revision > afterRev, in order
// and without gaps, until ctx is cancelled or etcd fails. Events are sent on
// the returned channel, which Watch closes when it stops; the error, if any,
// is then available from the returned func. A compacted start revision
// yields *CompactedError.
//
// The caller MUST cancel ctx when it stops reading, or etcd keeps the watch.
func (s *Store) Watch(ctx context.Context, prefix string, afterRev int64) (<-chan Event, func() error) {
	out := make(chan Event, 128)
	var err error
	go func() { // owner: this watch; stops on ctx or a watch error, closes out.
		defer close(out)
		err = s.pump(ctx, prefix, afterRev, out)
	}()
	return out, func() error { return err }
}

func (s *Store) pump(ctx context.Context, prefix string, afterRev int64, out chan<- Event) error {
	ctx = clientv3.WithRequireLeader(ctx)
	wch := s.client.Watch(ctx, prefix,
		clientv3.WithPrefix(), clientv3.WithRev(afterRev+1),
		clientv3.WithPrevKV(), clientv3.WithProgressNotify())
	for resp := range wch {
		if resp.CompactRevision != 0 {
			return &CompactedError{Requested: afterRev, Compacted: resp.CompactRevision}
		}
		if err := resp.Err(); err != nil {
			if errors.Is(err, rpctypes.ErrCompacted) {
				return &CompactedError{Requested: afterRev}
			}
			return fmt.Errorf("watch %s: %w", prefix, err)
		}
		if resp.IsProgressNotify() {
			if !send(ctx, out, Event{Type: Progress, Rev: resp.Header.Revision}) {
				return nil
			}
			continue
		}
		for _, ev := range resp.Events {
			if !send(ctx, out, convert(ev)) {
				return nil
			}
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("watch %s: closed by etcd", prefix)
}

func send(ctx context.Context, out chan<- Event, ev Event) bool {
	select {
	case out <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}

func convert(ev *clientv3.Event) Event {
	e := Event{Key: string(ev.Kv.Key), Rev: ev.Kv.ModRevision}
	if ev.PrevKv != nil {
		e.PrevValue = ev.PrevKv.Value
	}
	if ev.Type == mvccpb.DELETE {
		e.Type = Delete
		return e
	}
	e.Type = Put
	e.Value = ev.Kv.Value
	e.Created = ev.IsCreate()
	return e
}

// RequestProgress asks etcd to send a Progress event on every watch of this
// client, so idle watches learn that the revision moved on.
func (s *Store) RequestProgress(ctx context.Context) error {
	return s.client.RequestProgress(clientv3.WithRequireLeader(ctx))
}
