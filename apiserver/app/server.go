package app

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/mkube/mkube/apiserver"
)

// shutdownGrace is how long the ports' requests in flight may take to
// finish once the server is told to stop, before etcd closes under them.
const shutdownGrace = 5 * time.Second

// Server is the API server assembled: the apiserver.Server over etcd, its
// post-start hooks, and its ports.
type Server struct {
	API *apiserver.Server
	// PostStartHooks run in this order at Start (hooks.go); a test may
	// leave one out, to run that piece itself, before Start.
	PostStartHooks []PostStartHook

	cfg *Config
	// preShutdown run in order once Start's ctx ends, before the ports
	// and etcd close, as kube-apiserver's pre-shutdown hooks: each waits
	// for a hook's goodbye (the kubernetes Service's RemoveEndpoints).
	// The hooks append to it during Start, before anything reads it.
	preShutdown []func()
	// failedc gets each port's Serve error (buffered, one per port);
	// stoppedc is closed once everything has stopped after ctx ended.
	failedc  chan error
	stoppedc chan struct{}
}

// New builds the server on cfg (NewConfig's, perhaps changed by a test).
func New(cfg *Config) *Server {
	s := &Server{API: apiserver.New(cfg.Server), cfg: cfg, stoppedc: make(chan struct{})}
	s.PostStartHooks = s.postStartHooks()
	return s
}

// Start starts the storage (the watch caches), runs the post-start hooks
// in order, logging each by name, and serves the ports; it returns once
// they serve. When ctx ends, the pre-shutdown hooks run (this server
// leaves the kubernetes endpoints), the ports shut down (shutdownGrace
// for the requests in flight), then etcd and the audit log close, and
// Stopped is closed. Its errors are *Error; on error everything is closed already.
func (s *Server) Start(ctx context.Context) error {
	c := s.cfg
	if err := s.API.Start(ctx); err != nil {
		c.Close()
		return &Error{"start", err}
	}
	for _, h := range s.PostStartHooks {
		c.log.Info("running post-start hook", "hook", h.Name)
		if err := h.Start(ctx); err != nil {
			c.Close()
			return &Error{h.failure, err}
		}
	}
	servers, listeners := c.servers(s.API)
	addrs := make([]string, len(listeners))
	for i, ln := range listeners {
		addrs[i] = ln.Addr().String()
	}
	c.log.Info("serving the Kubernetes API", "addrs", strings.Join(addrs, ","), "kubeconfig", c.kubeconfig,
		"etcd", etcdDescription(c.opts.EtcdServers, c.opts.DataDir), "admission", strings.Join(c.admission.Enabled(), ","),
		"authorization", strings.Join(c.modes, ","),
		"startup", c.clock.Since(c.began).Round(time.Millisecond))
	s.failedc = make(chan error, len(servers))
	for i, hs := range servers {
		go func() { s.failedc <- hs.Serve(listeners[i]) }() // returns at Shutdown
	}
	go func() { // owner: the server; stops everything once ctx ends
		<-ctx.Done()
		for _, wait := range s.preShutdown {
			wait()
		}
		shutdown, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		for _, hs := range servers {
			if hs.Shutdown(shutdown) != nil {
				hs.Close() // what is still in flight after the grace
			}
		}
		c.Close()
		close(s.stoppedc)
	}()
	return nil
}

// Stopped is closed once the server has stopped, after Start's ctx ended.
func (s *Server) Stopped() <-chan struct{} { return s.stoppedc }

// Run starts the server and blocks until ctx ends, or until a port fails
// to serve (an *Error "serve"); either way it returns once everything has
// stopped.
func (s *Server) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		return err
	}
	var failed error
	select {
	case <-ctx.Done():
	case err := <-s.failedc:
		if err != http.ErrServerClosed {
			failed = &Error{"serve", err}
		}
		cancel()
	}
	<-s.stoppedc
	return failed
}
