package cri

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/images"
)

// InProcess is a runtime that serves CRI on a private socket inside the
// process that started it: a kubelet started without
// --container-runtime-endpoint runs one, and still reaches it over gRPC,
// so the kubelet-runtime boundary is the real one either way.
type InProcess struct {
	Endpoint string // "unix:///tmp/mkube-cri-1234/runtime.sock"
	srv      *Server
	stopc    chan struct{} // closed by Stop: ends Serve
	servedc  chan error    // Serve's, ServeStreaming's and ServePeers' results, sent once each returned
	dir      string
}

// StartInProcess starts a Server with opts on a fresh socket in a new
// temporary directory. Stop ends it and removes the directory.
func StartInProcess(opts Options) (*InProcess, error) {
	// The pod network's peer address on loopback: the other nodes'
	// runtimes, in-process in the other kubelets on this host, reach
	// this one's pods there.
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("in-process runtime: pod network: %w", err)
	}
	opts.PeerAddress = pl.Addr().String()
	srv, err := New(opts)
	if err != nil {
		pl.Close()
		return nil, err
	}
	// A FROM-scratch container image has no /tmp: make it, as a shell's
	// mktemp would need it too.
	if err := os.MkdirAll(os.TempDir(), 0o1777); err != nil {
		pl.Close()
		return nil, fmt.Errorf("in-process runtime: %w", err)
	}
	dir, err := os.MkdirTemp("", "mkube-cri-") // short: a socket path has at most 108 bytes
	if err != nil {
		pl.Close()
		return nil, fmt.Errorf("in-process runtime: %w", err)
	}
	endpoint := "unix://" + filepath.Join(dir, "runtime.sock")
	l, err := Listen(endpoint)
	if err != nil {
		pl.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	// The streaming server (exec, attach, port-forward) on loopback: the
	// kubelet, in this process, is its only client.
	sl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		pl.Close()
		l.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("in-process runtime: streaming server: %w", err)
	}
	p := &InProcess{Endpoint: endpoint, srv: srv, stopc: make(chan struct{}), servedc: make(chan error, 3), dir: dir}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-p.stopc; cancel() }()
	go func() { p.servedc <- srv.Serve(ctx, l) }()
	go func() { p.servedc <- srv.ServeStreaming(ctx, sl) }()
	go func() { p.servedc <- srv.ServePeers(ctx, pl) }()
	return p, nil
}

// Stop ends serving (calls in flight finish) and removes the socket's
// directory. Call it once.
func (p *InProcess) Stop() error {
	close(p.stopc)
	err := errors.Join(<-p.servedc, <-p.servedc, <-p.servedc) // CRI's, the streaming server's and the peers'
	os.RemoveAll(p.dir)
	return err
}

// A real runtime outlives the kubelet: containerd keeps its containers
// running and its records on disk, and a restarted kubelet finds them
// with ListPodSandbox and ListContainers. An in-process runtime dies with
// its kubelet, so a restarted kubelet rebuilds what the API server says
// the old one ran, by these calls, which are not CRI: they are the
// in-process runtime's stand-in for containerd's metadata database. What
// they restore is then reported over CRI as if it had never gone away.

// RestoredContainer is a container as the kubelet last reported it.
type RestoredContainer struct {
	ID                    string // without the "mkube://" of the pod status
	Config                *runtimeapi.ContainerConfig
	State                 runtimeapi.ContainerState // RUNNING or EXITED
	StartedAt, FinishedAt time.Time
	ExitCode              int32
	Reason                string
}

// RestoreImage puts the image name on the node again, as if pulled.
func (p *InProcess) RestoreImage(name string) error {
	ref, err := normalizeRef(name)
	if err != nil {
		return fmt.Errorf("restore image %q: %w", name, err)
	}
	img := newImage(ref)
	p.srv.mu.Lock()
	defer p.srv.mu.Unlock()
	p.srv.images[img.id] = img
	return nil
}

// RestoreSandbox recreates a ready sandbox with the IP it had (a new one
// if that IP is not in the pod CIDR or is taken), and its containers,
// whose images must be on the node. It returns the sandbox's new ID.
func (p *InProcess) RestoreSandbox(cfg *runtimeapi.PodSandboxConfig, ip netip.Addr, createdAt time.Time, containers []RestoredContainer) (string, error) {
	s := p.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	md := cfg.GetMetadata()
	name := fmt.Sprintf("%s_%s_%s_%d", md.GetName(), md.GetNamespace(), md.GetUid(), md.GetAttempt())
	if _, taken := s.names[name]; taken {
		return "", fmt.Errorf("restore sandbox %s: name is taken", name)
	}
	switch {
	case cfg.GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE:
		ip = netip.Addr{} // host network: the node's IP, which the runtime does not report
	case !s.ips.Reserve(ip): // not in the pod CIDR, or taken
		var err error
		if ip, err = s.ips.Allocate(); err != nil {
			return "", fmt.Errorf("restore sandbox %s: %w", name, err)
		}
	}
	sb := &sandbox{id: newID(), name: name, config: cfg, state: runtimeapi.PodSandboxState_SANDBOX_READY, pause: images.NewCPU(s.clock),
		createdAt: createdAt.UnixNano(), ip: ip}
	for _, rc := range containers {
		img, err := s.findImage(rc.Config.GetImage().GetImage())
		if err != nil {
			return "", fmt.Errorf("restore container %s: %w", rc.Config.GetMetadata().GetName(), err)
		}
		cmd := rc.Config.GetMetadata()
		cname := fmt.Sprintf("%s_%s_%s_%s_%d", cmd.GetName(), md.GetName(), md.GetNamespace(), md.GetUid(), cmd.GetAttempt())
		c := &container{id: rc.ID, sandboxID: sb.id, name: cname, config: rc.Config, image: img,
			logPath: logPath(cfg.GetLogDirectory(), rc.Config.GetLogPath()), state: rc.State,
			createdAt: rc.StartedAt.UnixNano(), startedAt: rc.StartedAt.UnixNano(),
			exitCode: rc.ExitCode, reason: rc.Reason}
		if !rc.FinishedAt.IsZero() {
			c.finishedAt = rc.FinishedAt.UnixNano()
		}
		c.resources.init(s.clock, rc.Config.GetLinux().GetResources()) // its CPU counted from now: the old cgroup died with the old runtime
		s.addContainer(c)
		s.names[cname] = c.id
		if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
			if err := s.resume(c, sb); err != nil {
				return "", fmt.Errorf("restore container %s: %w", cmd.GetName(), err)
			}
		}
	}
	s.addSandbox(sb)
	s.names[name] = sb.id
	s.log.Info("restored pod sandbox", "pod", md.GetNamespace()+"/"+md.GetName(), "id", sb.id,
		"ip", sb.ipString(), "containers", len(containers))
	return sb.id, nil
}
