package loadbalancer

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Balancer passes connections from Listener to healthy Backends.
// Run blocks until its context ends.
type Balancer struct {
	Listener net.Listener
	Backends []string // HOST:PORT of each API server's secure port
	// Interval is how often each backend's /readyz is asked: 1 s, so a
	// dead server is out within about a second plus the probe's timeout,
	// well inside client-go's 60 s request timeout.
	Interval time.Duration
	Log      *slog.Logger

	mu      sync.Mutex
	healthy map[string]bool
	conns   map[string]map[net.Conn]struct{} // the client connections each backend carries
	next    int                              // round-robin cursor
}

// probeTimeout bounds one /readyz: the server's own etcd check gives up
// after 2 s, so 3 s hears its answer.
const probeTimeout = 3 * time.Second

// Run checks the backends, then accepts until ctx ends.
func (b *Balancer) Run(ctx context.Context) error {
	b.mu.Lock()
	b.healthy = map[string]bool{}
	b.conns = map[string]map[net.Conn]struct{}{}
	for _, be := range b.Backends {
		b.conns[be] = map[net.Conn]struct{}{}
	}
	b.mu.Unlock()
	go b.checkLoop(ctx) // owner: Run; stops with ctx
	go func() { <-ctx.Done(); b.Listener.Close() }()
	for {
		c, err := b.Listener.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go b.serve(c) // owner: the connection; ends when either side closes
	}
}

// checkLoop asks every backend's /readyz each Interval and closes the
// client connections of one that turned unhealthy.
func (b *Balancer) checkLoop(ctx context.Context) {
	client := &http.Client{Timeout: probeTimeout, Transport: &http.Transport{
		// Only a liveness probe: no credentials are sent, nothing is
		// trusted from the answer but its code.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true}}
	for {
		var wg sync.WaitGroup
		for _, be := range b.Backends {
			wg.Add(1)
			go func() { defer wg.Done(); b.setHealth(be, probe(ctx, client, be)) }()
		}
		wg.Wait()
		select {
		case <-ctx.Done():
			return
		case <-time.After(b.Interval):
		}
	}
}

func probe(ctx context.Context, client *http.Client, backend string) error {
	req, _ := http.NewRequestWithContext(ctx, "GET", "https://"+backend+"/readyz", nil)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status + ": " + string(body))
	}
	return nil
}

// setHealth records a probe's outcome, logging a change, and on a
// healthy→unhealthy change closes that backend's connections.
func (b *Balancer) setHealth(backend string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	was, known := b.healthy[backend]
	now := err == nil
	b.healthy[backend] = now
	switch {
	case now && !was:
		b.Log.Info("backend is ready: new connections go to it too", "backend", backend)
	case !now && (was || !known):
		b.Log.Warn("backend is not ready: no new connections, its open ones closed so that clients reconnect elsewhere",
			"backend", backend, "closed", len(b.conns[backend]), "err", err)
		for c := range b.conns[backend] {
			c.Close()
		}
	}
}

// pick returns the healthy backends, starting at the round-robin cursor,
// then the others: when no probe has succeeded yet (all starting), a
// dial may still find one.
func (b *Balancer) pick() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.Backends)
	b.next = (b.next + 1) % n
	var good, rest []string
	for i := range n {
		be := b.Backends[(b.next+i)%n]
		if b.healthy[be] {
			good = append(good, be)
		} else {
			rest = append(rest, be)
		}
	}
	return append(good, rest...)
}

// dialTimeout bounds the connect to one backend: a dead container's
// address does not answer at all, and the next one should be tried.
const dialTimeout = 2 * time.Second

// serve passes c to the first backend that accepts it and copies bytes
// both ways until either side closes.
func (b *Balancer) serve(c net.Conn) {
	defer c.Close()
	var up net.Conn
	var backend string
	for _, be := range b.pick() {
		conn, err := net.DialTimeout("tcp", be, dialTimeout)
		if err == nil {
			up, backend = conn, be
			break
		}
		b.Log.Debug("dial backend", "backend", be, "err", err)
	}
	if up == nil {
		b.Log.Warn("no backend accepted a connection", "client", c.RemoteAddr().String())
		return
	}
	defer up.Close()
	b.track(backend, c, true)
	defer b.track(backend, c, false)
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, c); done <- struct{}{} }()
	go func() { io.Copy(c, up); done <- struct{}{} }()
	<-done // one way ended: close both (the defers), which ends the other
}

func (b *Balancer) track(backend string, c net.Conn, add bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if add {
		b.conns[backend][c] = struct{}{}
	} else {
		delete(b.conns[backend], c)
	}
}
