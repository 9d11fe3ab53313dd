package loadbalancer

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// backend is a TLS server whose /readyz answers as ready says, and whose
// other paths name it.
func backend(t *testing.T, name string, ready *atomic.Bool) *httptest.Server {
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" && !ready.Load() {
			http.Error(w, "etcd: no quorum", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, name)
	}))
	t.Cleanup(s.Close)
	return s
}

func TestConnectionsGoOnlyToReadyBackendsAndLeaveOnesThatFail(t *testing.T) {
	var aReady, bReady atomic.Bool
	aReady.Store(true)
	a, b := backend(t, "a", &aReady), backend(t, "b", &bReady)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lb := &Balancer{Listener: ln, Backends: []string{a.Listener.Addr().String(), b.Listener.Addr().String()},
		Interval: 10 * time.Millisecond, Log: slog.New(slog.DiscardHandler)}
	go lb.Run(ctx)

	// One keep-alive client: its connection stays on one backend.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func() (string, error) {
		resp, err := client.Get("https://" + ln.Addr().String() + "/who")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return string(body), err
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			if cond() {
				return
			}
		}
		t.Fatalf("not within 5s: %s", what)
	}
	waitFor("a probed ready, b not", func() bool {
		lb.mu.Lock()
		defer lb.mu.Unlock()
		return lb.healthy[lb.Backends[0]] && !lb.healthy[lb.Backends[1]]
	})
	for range 4 {
		client.CloseIdleConnections() // a new connection each time: each one picked anew
		if who, err := get(); err != nil || who != "a" {
			t.Fatalf("with only a ready: %q %v", who, err)
		}
	}
	// a fails, b is ready: the open connection to a is cut, and the
	// client's next request, on a new connection, lands on b.
	aReady.Store(false)
	bReady.Store(true)
	waitFor("the client reaches b", func() bool {
		who, err := get()
		return err == nil && strings.TrimSpace(who) == "b"
	})
	lb.mu.Lock()
	open := len(lb.conns[lb.Backends[0]])
	lb.mu.Unlock()
	if open != 0 {
		t.Fatalf("%d connections still open to the failed backend a", open)
	}
}
