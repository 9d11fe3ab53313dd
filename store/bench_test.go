package store_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/mkube/mkube/store"
)

// BenchmarkCreate measures guarded creates (one etcd txn and fsync each)
// from one client, as the API server does them.
func BenchmarkCreate(b *testing.B) {
	s := newStore(b)
	value := make([]byte, 2048) // about a pod's JSON
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.Create(ctx, store.Key("pods", "default", fmt.Sprintf("p%d", i)), value); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
}

// BenchmarkCreateParallel: 16 concurrent writers, as 16 clients would be;
// etcd batches their fsyncs.
func BenchmarkCreateParallel(b *testing.B) {
	s := newStore(b)
	value := make([]byte, 2048)
	ctx := context.Background()
	var n atomic.Int64
	b.SetParallelism(8) // × GOMAXPROCS(2) = 16 writers
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			if _, err := s.Create(ctx, store.Key("pods", "default", fmt.Sprintf("p%d", i)), value); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
}
