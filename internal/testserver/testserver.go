// Package testserver runs a real mkube API server inside a test: embedded
// etcd in the test's temp dir, the apiserver package, an httptest
// listener. Component tests (controllers, scheduler, kubelet) talk to it
// over HTTP exactly as the binaries talk to cmd/apiserver.
package testserver

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"

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
