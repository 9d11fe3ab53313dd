package store

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// PutWithTTL writes key attached to a new etcd lease of ttl (rounded up
// to whole seconds, etcd's unit), and returns the revision of the write.
// When the lease expires, etcd deletes the key itself: a writer that
// dies stops renewing, and its key goes away without anyone cleaning up.
//
// Renewing is writing again: each write grants a fresh lease and moves
// the key onto it, so the key lives ttl from its last write. The lease it
// left holds no key any more and expires harmlessly. (kube-apiserver's
// storage does the same for objects with a TTL, reusing a lease across
// writes a few seconds apart to save grants; at one write per server
// every 10 s there is nothing worth saving.)
//
// etcd stretches a TTL shorter than its minimum (one and a half election
// timeouts, 2 s with the default 1 s election) up to that minimum.
func (s *Store) PutWithTTL(ctx context.Context, key string, value []byte, ttl time.Duration) (int64, error) {
	seconds := int64((ttl + time.Second - 1) / time.Second)
	lease, err := s.client.Grant(ctx, seconds)
	if err != nil {
		return 0, fmt.Errorf("grant a %ds lease for %s: %w", seconds, key, err)
	}
	resp, err := s.client.Put(ctx, key, string(value), clientv3.WithLease(lease.ID))
	if err != nil {
		return 0, fmt.Errorf("put %s with a %ds lease: %w", key, seconds, err)
	}
	return resp.Header.Revision, nil
}

// Remove deletes key whatever its revision, and reports whether it was
// there: for keys only their one writer changes, such as a lease it gives
// back before its TTL runs out.
func (s *Store) Remove(ctx context.Context, key string) (bool, error) {
	resp, err := s.client.Delete(ctx, key)
	if err != nil {
		return false, fmt.Errorf("remove %s: %w", key, err)
	}
	return resp.Deleted > 0, nil
}
