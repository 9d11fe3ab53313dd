package cri

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"path"
	"sync"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/network/dns"
	"github.com/mkube/mkube/network/podnetwork"
	"github.com/mkube/mkube/network/proxy"
	"github.com/mkube/mkube/proto/runtimev1"
)

// DefaultPodCIDR is where sandboxes get their IPs unless told otherwise:
// the range of containerd's default CNI bridge network ("containerd-net").
var DefaultPodCIDR = netip.MustParsePrefix("10.88.0.0/16")

// Options configure a Server. The zero value is usable.
type Options struct {
	PodCIDR        netip.Prefix  // sandbox IPs; zero means DefaultPodCIDR
	ImagePullDelay time.Duration // how long each PullImage takes, on Clock
	Clock          clock.Clock   // nil means the real clock
	Log            *slog.Logger  // nil discards
	// NodeRoot is the directory that stands for the nodes' disks: node
	// N's "/" is NodeRoot/N, where its kubelet keeps its pods' volumes
	// and hostPath volumes live (volumes.go). "" mounts no volumes (the
	// containers' mounts are only recorded).
	NodeRoot string
	// PeerAddress is the host:port at which the other nodes' runtimes
	// reach this one's pods (ServePeers), "" if they cannot: its pods are
	// reachable from this node only.
	PeerAddress string
	// GRPCMetrics, if set, counts and times the calls Serve answers, as
	// containerd's grpc_server_* series at its [metrics] address
	// (cmd/runtime's --metrics-address serves them).
	GRPCMetrics *grpcprom.ServerMetrics
}

// Server is the runtime: its state and the CRI calls on it. It embeds the
// generated Unimplemented servers, so the calls it does not serve yet
// (the pod sandbox stats) answer
// codes.Unimplemented, which CRI clients such as crictl and the kubelet
// understand.
type Server struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer

	opts  Options
	clock clock.Clock
	log   *slog.Logger

	// mu guards everything below. Calls are short and in memory, so one
	// lock for the whole runtime keeps the state easy to reason about.
	mu sync.Mutex
	records
	images map[string]*image // by image ID
	// names reserves each sandbox's and container's name until it is
	// removed, as containerd does: a second RunPodSandbox for the same
	// pod and attempt, or a second CreateContainer for the same container
	// and attempt, is refused. That is why the kubelet counts attempts.
	names       map[string]string // name → ID
	ips         *podnetwork.PodIPs
	subscribers map[*subscriber]bool // GetContainerEvents streams (events.go)

	faults   faultState             // injected faults (faults.go), with their own lock
	memory   memoryVolumes          // emptyDirs of medium Memory (tmpfs.go), with their own lock
	routes   *podnetwork.RouteTable // to the other nodes' pods (network/podnetwork), with its own lock
	services *proxy.Table           // kube-proxy's rules (network/proxy), with their own lock
	dns      *dns.Server            // the cluster DNS (network/dns), with its own lock
	// net is the node's pod network: its bridge to the sandboxes, its
	// Service rules and routes (network/podnetwork; network.go wires it).
	net *podnetwork.Node

	// streaming serves exec, attach and port-forward (streaming.go); nil
	// until ServeStreaming runs. Guarded by mu.
	streaming streaming.Server
}

// New returns an empty runtime.
func New(opts Options) (*Server, error) {
	if !opts.PodCIDR.IsValid() {
		opts.PodCIDR = DefaultPodCIDR
	}
	ips, err := podnetwork.NewPodIPs(opts.PodCIDR)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, clock: opts.Clock, log: opts.Log, ips: ips,
		records: newRecords(), routes: podnetwork.NewRouteTable(), images: map[string]*image{}, names: map[string]string{}, subscribers: map[*subscriber]bool{}}
	if s.clock == nil {
		s.clock = clock.RealClock{}
	}
	s.services = proxy.NewTable(s.clock)
	s.dns = dns.NewServer()
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.net = &podnetwork.Node{PodCIDR: opts.PodCIDR, Sandboxes: podSandboxes{s}, Services: s.services, Routes: s.routes, Clock: s.clock, Log: s.log}
	return s, nil
}

// Serve answers CRI calls on l until ctx ends, then stops gracefully:
// calls in flight finish, and closing l removes its socket file. It
// returns nil after such a stop, or why serving failed.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	unary := []grpc.UnaryServerInterceptor{s.logFailures, s.waitWhileFrozen}
	stream := []grpc.StreamServerInterceptor{s.waitWhileFrozenStream}
	m := s.opts.GRPCMetrics
	if m != nil {
		// Outermost, so that a call's time includes a freeze it waited out.
		unary = append([]grpc.UnaryServerInterceptor{m.UnaryServerInterceptor()}, unary...)
		stream = append([]grpc.StreamServerInterceptor{m.StreamServerInterceptor()}, stream...)
	}
	g := grpc.NewServer(grpc.ChainUnaryInterceptor(unary...), grpc.ChainStreamInterceptor(stream...))
	runtimeapi.RegisterRuntimeServiceServer(g, s)
	runtimeapi.RegisterImageServiceServer(g, s)
	runtimev1.RegisterFaultsServer(g, faultsServer{s: s})         // mkube's own, beside CRI (faults.go)
	runtimev1.RegisterPodNetworkServer(g, podNetworkServer{s: s}) // and the pod network (network.go)
	if m != nil {
		m.InitializeMetrics(g) // every method at 0, before its first call
	}
	return s.serveGRPC(ctx, g, l, "CRI")
}

// ServePeers answers the other nodes' runtimes on l, the pod network's
// peer address (network/podnetwork/routes.go), until ctx ends: only
// PodNetwork's Dial, which connects only to this runtime's own
// sandboxes.
func (s *Server) ServePeers(ctx context.Context, l net.Listener) error {
	g := grpc.NewServer(grpc.StreamInterceptor(s.waitWhileFrozenStream))
	runtimev1.RegisterPodNetworkServer(g, podNetworkServer{s: s, peer: true})
	return s.serveGRPC(ctx, g, l, "pod network peers")
}

// serveGRPC serves g on l until ctx ends, then stops it gracefully.
func (s *Server) serveGRPC(ctx context.Context, g *grpc.Server, l net.Listener, what string) error {
	// One goroutine stops g: when ctx ends, or when g.Serve has failed
	// (Serve closes servedc). It closes stoppedc once g is stopped, and
	// Serve waits for that, so no goroutine outlives the call.
	servedc := make(chan struct{})
	stoppedc := make(chan struct{})
	go func() {
		defer close(stoppedc)
		select {
		case <-ctx.Done():
		case <-servedc:
		}
		s.setFrozen(false) // calls a frozen runtime holds would keep GracefulStop waiting
		g.GracefulStop()
	}()
	// g.Serve returns nil once GracefulStop is called, or ErrServerStopped
	// if that happened before it began; either way it closes l.
	err := g.Serve(l)
	close(servedc)
	<-stoppedc
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("serve %s: %w", what, err)
	}
	return nil
}

// logFailures logs every call at debug level and every failed call at
// info level, with its gRPC code: what the client asked, and why it was
// refused. Successful calls that change something log themselves, in
// plain words ("started container").
func (s *Server) logFailures(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	call := path.Base(info.FullMethod) // "/runtime.v1.RuntimeService/StartContainer" → "StartContainer"
	s.log.Debug("CRI call", "call", call)
	resp, err := handler(ctx, req)
	if err != nil {
		st := status.Convert(err)
		s.log.Info("CRI call failed", "call", call, "code", st.Code(), "err", st.Message())
	}
	return resp, err
}
