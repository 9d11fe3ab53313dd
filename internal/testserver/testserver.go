package testserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/app"
	"github.com/mkube/mkube/apiserver/authentication/serviceaccount"
	"github.com/mkube/mkube/apiserver/authorization"
	"github.com/mkube/mkube/store"
)

// Start runs an API server until the test ends and returns its URL.
func Start(t testing.TB) string { return StartServer(t).URL }

// Server is a running test API server and the store under it, for tests
// that also look at, or write, what is in etcd.
type Server struct {
	t     testing.TB
	URL   string // the plain port's
	Store *store.Store
	API   *apiserver.Server
}

// StartServer runs an API server with every kind until the test ends;
// configure, if given, changes its apiserver.Config first (a fake clock,
// say: the server's, not its post-start hooks', which keep real time).
func StartServer(t testing.TB, configure ...func(*apiserver.Config)) *Server {
	t.Helper()
	return StartServerWithout(t, nil, configure...)
}

// StartServerWithout is StartServer leaving out the post-start hooks
// named (app's names, as app.APIServicesHook), for a test that runs that
// piece itself, with fakes of its own.
func StartServerWithout(t testing.TB, hooks []string, configure ...func(*apiserver.Config)) *Server {
	t.Helper()
	cfg, err := app.NewConfig(app.Options{PlainAddress: "127.0.0.1:0", SecureAddress: "127.0.0.1:0", AdvertiseAddress: "127.0.0.1",
		DataDir: t.TempDir(), AuthorizationModes: authorization.DefaultModes,
		Authentication: app.AuthenticationOptions{Anonymous: true, Issuer: serviceaccount.DefaultIssuer},
		Log:            slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range configure {
		f(&cfg.Server)
	}
	srv := app.New(cfg)
	srv.PostStartHooks = slices.DeleteFunc(srv.PostStartHooks, func(h app.PostStartHook) bool { return slices.Contains(hooks, h.Name) })
	ctx, cancel := context.WithCancel(context.Background())
	if err := srv.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { // watches end with ctx, so the ports can shut down
		cancel()
		<-srv.Stopped()
	})
	return &Server{t: t, URL: cfg.PlainURL(), Store: cfg.Store(), API: srv.API}
}

// Do sends a request and decodes the JSON answer into out (if non-nil);
// it returns the HTTP status code.
func (s *Server) Do(method, path, contentType, body string, out any) int {
	s.t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return s.DoRequest(req, out)
}

// DoRequest is Do for a request the test built (with its own headers).
func (s *Server) DoRequest(req *http.Request, out any) int {
	s.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			s.t.Fatalf("%s %s: decode %q: %v", req.Method, req.URL.Path, data, err)
		}
	}
	return resp.StatusCode
}

// Background runs f in a goroutine and, when the test ends, cancels its
// context and waits for it to return, so nothing outlives the test. (Not
// Run: across mkube, Run blocks until its context ends, Start returns.)
func Background(t testing.TB, f func(ctx context.Context)) {
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
	EventuallyWithin(t, EventuallyTimeout, what, cond)
}

// EventuallyWithin is Eventually with its own timeout, for waits that take
// longer than an in-process cluster's, such as a cluster of processes
// starting or a node being declared lost.
func EventuallyWithin(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	end := time.Now().Add(timeout)
	for {
		began := time.Now()
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("not true within %v: %s; last state: %s", timeout, what, state)
		}
		// Polling a condition, not waiting for time to pass: 10 ms
		// between checks, or as long as a check takes (one that runs
		// kubectl), so waiting costs at most half the CPU.
		time.Sleep(max(10*time.Millisecond, time.Since(began)))
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
