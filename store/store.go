package store

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/utils/clock"
)

// Sentinel errors; the API server maps them to Kubernetes Status reasons.
var (
	ErrNotFound = errors.New("key not found")      // 404 NotFound
	ErrExists   = errors.New("key already exists") // 409 AlreadyExists
	ErrConflict = errors.New("revision conflict")  // 409 Conflict
)

// KV is one stored value and the revision it was last written at.
type KV struct {
	Key   string
	Value []byte
	Rev   int64 // etcd ModRevision: the object's resourceVersion
}

// Store reads and writes values in etcd with optimistic concurrency.
type Store struct {
	client *clientv3.Client
	clock  clock.Clock // paces the compactor; WithClock injects a fake one
}

// New wraps an etcd client (embedded or external).
func New(client *clientv3.Client, opts ...Option) *Store {
	s := &Store{client: client, clock: clock.RealClock{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Client exposes the raw etcd client, for health checks.
func (s *Store) Client() *clientv3.Client { return s.client }

// Create writes key only if it has never existed, and returns the revision
// of the write.
func (s *Store) Create(ctx context.Context, key string, value []byte) (int64, error) {
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(value))).
		Commit()
	if err != nil {
		return 0, fmt.Errorf("create %s: %w", key, err)
	}
	if !resp.Succeeded {
		return 0, ErrExists
	}
	return resp.Header.Revision, nil
}

// Get reads the current value of key.
func (s *Store) Get(ctx context.Context, key string) (KV, error) {
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		return KV{}, fmt.Errorf("get %s: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return KV{}, ErrNotFound
	}
	kv := resp.Kvs[0]
	return KV{Key: key, Value: kv.Value, Rev: kv.ModRevision}, nil
}

// Update replaces key's value if its ModRevision is still expectRev.
func (s *Store) Update(ctx context.Context, key string, value []byte, expectRev int64) (int64, error) {
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", expectRev)).
		Then(clientv3.OpPut(key, string(value))).
		Else(clientv3.OpGet(key, clientv3.WithKeysOnly())).
		Commit()
	if err != nil {
		return 0, fmt.Errorf("update %s: %w", key, err)
	}
	if !resp.Succeeded {
		return 0, missingOrConflict(resp)
	}
	return resp.Header.Revision, nil
}

// Delete removes key if its ModRevision is still expectRev, and returns the
// revision of the deletion.
func (s *Store) Delete(ctx context.Context, key string, expectRev int64) (int64, error) {
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", expectRev)).
		Then(clientv3.OpDelete(key)).
		Else(clientv3.OpGet(key, clientv3.WithKeysOnly())).
		Commit()
	if err != nil {
		return 0, fmt.Errorf("delete %s: %w", key, err)
	}
	if !resp.Succeeded {
		return 0, missingOrConflict(resp)
	}
	return resp.Header.Revision, nil
}

// missingOrConflict tells apart the two reasons a guarded txn fails: the key
// is gone, or somebody else wrote it first.
func missingOrConflict(resp *clientv3.TxnResponse) error {
	if len(resp.Responses) > 0 && len(resp.Responses[0].GetResponseRange().Kvs) == 0 {
		return ErrNotFound
	}
	return ErrConflict
}

// ListOptions selects a page of keys under a prefix.
type ListOptions struct {
	// Rev reads the keys as they were at that revision; 0 means now.
	Rev int64
	// Limit caps the number of keys returned; 0 means all.
	Limit int64
	// After starts the page after this key (exclusive), for pagination.
	After string
}

// ListResult is one page of a list.
type ListResult struct {
	KVs  []KV
	Rev  int64 // the revision the list was read at: the list's resourceVersion
	More bool  // more keys follow the last one returned
	// Count is how many keys the range holds from where this read
	// started: those returned and those after them (etcd's count).
	Count int64
}

// List reads every key under prefix at one revision. Reading all pages at
// the first page's revision gives a consistent snapshot.
func (s *Store) List(ctx context.Context, prefix string, opts ListOptions) (ListResult, error) {
	start := prefix
	if opts.After != "" {
		start = opts.After + "\x00"
	}
	ops := []clientv3.OpOption{clientv3.WithRange(clientv3.GetPrefixRangeEnd(prefix))}
	if opts.Rev > 0 {
		ops = append(ops, clientv3.WithRev(opts.Rev))
	}
	if opts.Limit > 0 {
		ops = append(ops, clientv3.WithLimit(opts.Limit))
	}
	resp, err := s.client.Get(ctx, start, ops...)
	if errors.Is(err, rpctypes.ErrCompacted) {
		return ListResult{}, &CompactedError{Requested: opts.Rev} // the next page of a list begun before a compaction
	}
	if err != nil {
		return ListResult{}, fmt.Errorf("list %s: %w", prefix, err)
	}
	out := ListResult{Rev: resp.Header.Revision, More: resp.More, Count: resp.Count, KVs: make([]KV, 0, len(resp.Kvs))}
	if opts.Rev > 0 {
		out.Rev = opts.Rev
	}
	for _, kv := range resp.Kvs {
		out.KVs = append(out.KVs, KV{Key: string(kv.Key), Value: kv.Value, Rev: kv.ModRevision})
	}
	return out, nil
}

// Revision returns etcd's current revision.
func (s *Store) Revision(ctx context.Context) (int64, error) {
	resp, err := s.client.Get(ctx, "/registry/\x00", clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("read revision: %w", err)
	}
	return resp.Header.Revision, nil
}
