package cri

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/images/catalog"
	"github.com/mkube/mkube/images/shell"
	"github.com/mkube/mkube/network/dns"
	"github.com/mkube/mkube/network/podnetwork"
	"github.com/mkube/mkube/network/podnetwork/podnet"
	"github.com/mkube/mkube/network/proxy"
	"github.com/mkube/mkube/proto/runtimev1"
)

// The runtime's side of the pod network (network/). The node's network
// itself, its bridge, Service rules and routes, is network/podnetwork's
// Node (s.net); the runtime serves it over gRPC (PodNetwork, mkube's own
// service beside CRI, proto/runtime.proto), tells it about its sandboxes
// (podSandboxes), and gives its containers' processes their way out
// (dialerOf) and to their nameserver (lookupOf).

// podNetworkServer serves the PodNetwork service on s: to the kubelet on
// the CRI socket, or, if peer, to the other nodes' runtimes
// (network/podnetwork/routes.go).
type podNetworkServer struct {
	runtimev1.UnimplementedPodNetworkServer
	s    *Server
	peer bool
}

// Dial carries one connection to a pod of this node (network/podnetwork's
// bridge.go).
func (n podNetworkServer) Dial(stream runtimev1.PodNetwork_DialServer) error {
	return n.s.net.ServeDial(stream)
}

// SetRoutes replaces the routes to the other nodes' pods and answers with
// this runtime's peer address. The peer address serves only Dial.
func (n podNetworkServer) SetRoutes(_ context.Context, req *runtimev1.SetRoutesRequest) (*runtimev1.SetRoutesResponse, error) {
	if n.peer {
		return nil, status.Error(codes.PermissionDenied, "a peer may not set this runtime's routes")
	}
	if err := n.s.routes.Set(req.GetRoutes()); err != nil {
		return nil, err
	}
	cidrs := make([]string, len(req.GetRoutes()))
	for i, r := range req.GetRoutes() {
		cidrs[i] = fmt.Sprintf("%s via %s", r.GetPodCidr(), r.GetPeer())
	}
	n.s.log.Info("pod network: routes set", "routes", cidrs)
	return &runtimev1.SetRoutesResponse{PeerAddress: n.s.opts.PeerAddress}, nil
}

// SetServices replaces the node's Service rules (network/proxy) and the
// cluster DNS's records (network/dns). It validates both first: a bad
// rule or record changes neither.
func (n podNetworkServer) SetServices(_ context.Context, req *runtimev1.SetServicesRequest) (*runtimev1.SetServicesResponse, error) {
	if n.peer {
		return nil, status.Error(codes.PermissionDenied, "a peer may not set this runtime's Services")
	}
	rules, err := proxy.ParseRules(req)
	if err != nil {
		return nil, err
	}
	zone, err := dns.NewZone(req)
	if err != nil {
		return nil, err
	}
	n.s.services.Replace(rules)
	n.s.dns.Replace(zone)
	n.s.log.Info("service proxy: rules set", "services", len(req.GetServices()), "nodeIPs", len(req.GetNodeIps()), "clusterDNS", req.GetClusterDns())
	return &runtimev1.SetServicesResponse{}, nil
}

// podSandboxes is the runtime's sandboxes as the pod network sees them
// (podnetwork.Sandboxes): their IPs, the ports their containers'
// processes listen on, and their port mappings.
type podSandboxes struct{ s *Server }

var _ podnetwork.Sandboxes = podSandboxes{}

// Listener is the running container of the sandbox with IP ip whose
// process listens on port over network, and what its image serves there.
func (p podSandboxes) Listener(network string, ip netip.Addr, port int32) (string, *podnetwork.Listener, bool) {
	s := p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	sb := s.sandboxesByIP[ip]
	if sb == nil {
		return "", nil, false
	}
	c := s.listener(sb, network, port)
	if c == nil {
		return podKeyOf(sb), nil, true
	}
	img, run := s.running(sb, c)
	l := &podnetwork.Listener{Container: c.config.GetMetadata().GetName(), Exited: c.proc.exited}
	if img.Serve != nil {
		l.Serve = func(conn net.Conn) { img.Serve(run, port, conn) }
	}
	if img.ServeDatagram != nil {
		l.ServeDatagram = func(from *net.UDPAddr, datagram []byte) [][]byte { return img.ServeDatagram(run, port, from, datagram) }
	}
	return podKeyOf(sb), l, true
}

// HostPort is the pod address a ready sandbox's port mapping of dst's
// port and protocol, on dst's address or on every address, sends dst to
// (the CNI portmap plugin's DNAT).
func (p podSandboxes) HostPort(network string, dst netip.AddrPort) (netip.AddrPort, bool) {
	s := p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for ip, sb := range s.sandboxesByIP {
		if sb.state != runtimeapi.PodSandboxState_SANDBOX_READY {
			continue
		}
		for _, pm := range sb.config.GetPortMappings() {
			if pm.GetHostPort() != int32(dst.Port()) || podnet.NetworkOf(pm.GetProtocol().String()) != network {
				continue
			}
			switch pm.GetHostIp() {
			case "", "0.0.0.0", dst.Addr().String():
				return netip.AddrPortFrom(ip, uint16(pm.GetContainerPort())), true
			}
		}
	}
	return netip.AddrPort{}, false
}

// listener is the running container of sb whose process listens on
// port over network ("tcp", "udp"), or nil. Callers hold s.mu.
func (s *Server) listener(sb *sandbox, network string, port int32) *container {
	if sb.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil
	}
	for _, c := range s.containersBySandbox[sb.id] {
		if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING || c.proc == nil {
			continue
		}
		if network == "tcp" && c.proc.sh.Listening(port) || network == "udp" && c.proc.sh.ListeningUDP(port) {
			return c
		}
	}
	return nil
}

// running is what the image of c, a container of sb, serves with, and
// what its server knows of c. Callers hold s.mu.
func (s *Server) running(sb *sandbox, c *container) (catalog.Image, catalog.Running) {
	img := catalog.Lookup(c.image.ref)
	return img, catalog.Running{Process: c.proc.sh, Argv: commandLine(img, c.config.GetCommand(), c.config.GetArgs()),
		Env: environment(img, c.config, sb), Started: time.Unix(0, c.startedAt)}
}

// dialerOf is how the processes of sb's containers connect out, over
// "tcp" or "udp": a name is first resolved by the cluster DNS
// (network/dns), as the C library's getaddrinfo asks the pod's
// nameserver.
func (s *Server) dialerOf(sb *sandbox) func(ctx context.Context, network, address string) (net.Conn, error) {
	src := sb.ip
	resolver := s.resolverOf(sb)
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(address)
		if err == nil && host != "localhost" {
			if _, err := netip.ParseAddr(host); err != nil {
				ip, err := resolver.LookupHost(ctx, host)
				if err != nil {
					return nil, &net.OpError{Op: "dial", Net: network, Err: err}
				}
				address = net.JoinHostPort(ip.String(), port)
			}
		}
		return s.net.DialOut(ctx, src, network, address)
	}
}

// resolverOf is how the processes of sb's containers ask their
// nameserver, as its resolv.conf says (network/dns).
func (s *Server) resolverOf(sb *sandbox) *dns.PodResolver {
	return dns.NewPodResolver(s.dns, sb.config.GetDnsConfig())
}

// lookupOf is resolverOf's Lookup: the shell's way to ask.
func (s *Server) lookupOf(sb *sandbox) func(ctx context.Context, q shell.DNSQuestion) (shell.DNSReply, error) {
	return s.resolverOf(sb).Lookup
}
