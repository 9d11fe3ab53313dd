// Package testserver runs a real mkube API server inside a test: embedded
// etcd in the test's temp dir, the apiserver package, an httptest
// listener. Component tests (controllers, scheduler, kubelet) talk to it
// over HTTP exactly as the binaries talk to cmd/apiserver.
package testserver

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/store"
)

// Start runs an API server until the test ends and returns its URL.
func Start(t testing.TB) string {
	t.Helper()
	e, err := store.StartEmbedded(store.EmbeddedOptions{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	ctx, cancel := context.WithCancel(context.Background())
	srv := apiserver.New(apiserver.Config{Store: store.New(e.Client), Log: slog.New(slog.DiscardHandler)})
	if err := srv.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	t.Cleanup(cancel) // runs before hs.Close: watches end, so Close can return
	return hs.URL
}

// Run starts f in a goroutine and, when the test ends, cancels its context
// and waits for it to return, so nothing outlives the test.
func Run(t testing.TB, f func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { f(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// EventuallyTimeout bounds each wait of Eventually: ample for an
// in-process cluster to converge, short enough to fail fast.
const EventuallyTimeout = 10 * time.Second

// Eventually polls cond until it holds, failing the test after
// EventuallyTimeout; cond describes the state it saw, for the message.
func Eventually(t testing.TB, what string, cond func() (bool, string)) {
	t.Helper()
	end := time.Now().Add(EventuallyTimeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("not true within %v: %s; last state: %s", EventuallyTimeout, what, state)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, not waiting for time to pass
	}
}

// LogBuffer collects a component's log lines written from its goroutines,
// to print when a test fails.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
