package cri

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/images/catalog"
	"github.com/mkube/mkube/network/dns"
	"github.com/mkube/mkube/network/podnetwork/podnet"
	"github.com/mkube/mkube/network/proxy"
	"github.com/mkube/mkube/proto/runtimev1"
)

// The pod network. On a real node each sandbox is a network namespace
// with a veth on the node's bridge, and the kubelet's httpGet and
// tcpSocket probes connect to the pod's IP from the node. Here the pod
// IPs (ipam.go) are no host's addresses, so the node reaches its pods
// through the runtime: the PodNetwork service (proto/runtime.proto)
// carries one TCP connection per Dial call (or one UDP socket's
// datagrams, datagrams.go), and the runtime connects it, in memory, to
// the container whose process listens on the port, which answers with
// what its image serves (catalog.Image.Serve).
//
// A connection costs two goroutines while it is open and nothing once
// it is closed: an idle container has no listener running.

// arpTimeout is how long connecting to an IP that no sandbox has takes
// to fail: the node's kernel sends ARP requests for it on the bridge
// (mcast_solicit 3, one a second) and, unanswered, fails the connect
// with EHOSTUNREACH. A probe with the default timeoutSeconds of 1 sees
// its own i/o timeout first, as on a real node.
const arpTimeout = 3 * time.Second

// podNetworkServer serves the PodNetwork service on s: to the kubelet on
// the CRI socket, or, if peer, to the other nodes' runtimes (network/podnetwork/routes.go).
type podNetworkServer struct {
	runtimev1.UnimplementedPodNetworkServer
	s    *Server
	peer bool
}

// Dial carries one connection. The client's first frame names where to
// connect; once connected, the runtime answers with the source address
// the pod sees, then pumps bytes both ways: this goroutine from the
// client to the pod, one more from the pod to the client (the stream's
// only sender from then on). The client's CloseSend is its FIN, passed
// on with CloseWrite; the pod's end of writing is a close_write frame.
// The call ends once the pod's side is done and the client's is done or
// gone; the client cancelling the call (its Close) closes the
// connection at once.
func (n podNetworkServer) Dial(stream runtimev1.PodNetwork_DialServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	dst := first.GetAddress()
	if dst == nil {
		return status.Error(codes.InvalidArgument, "the first frame must name the destination address")
	}
	ctx := stream.Context()
	from := n.s.gateway()                    // the node's
	if src := first.GetSource(); src != "" { // a peer's pod (network/podnetwork/routes.go)
		addr, perr := netip.ParseAddr(src)
		if perr != nil || !addr.Is4() {
			return status.Errorf(codes.InvalidArgument, "source %q is not an IPv4 address", src)
		}
		from = addr
	}
	switch first.GetProtocol() {
	case "", "tcp":
	case "udp":
		return n.s.serveDatagrams(stream, from, dst) // datagrams.go
	default:
		return status.Errorf(codes.InvalidArgument, "protocol %q: want tcp or udp", first.GetProtocol())
	}
	conn, err := n.s.dialPodFrom(ctx, from, dst.GetIp(), dst.GetPort())
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() }) // unblocks both pumps when the client goes
	defer stop()
	src := conn.LocalAddr().(*net.TCPAddr)
	if err := stream.Send(&runtimev1.DialFrame{Address: &runtimev1.Address{Ip: src.IP.String(), Port: int32(src.Port)}}); err != nil {
		return err
	}

	// From the pod to the client, until the pod closes its side (EOF,
	// passed on as close_write) or the connection is closed. sentc is
	// closed when it is done; Dial returns only after, since a stream
	// must not be sent on once its handler has returned.
	sentc := make(chan struct{})
	go func() {
		defer close(sentc)
		buf := make([]byte, 32<<10)
		for {
			n, err := conn.Read(buf)
			if n > 0 && stream.Send(&runtimev1.DialFrame{Data: buf[:n]}) != nil {
				return
			}
			if errors.Is(err, io.EOF) {
				stream.Send(&runtimev1.DialFrame{CloseWrite: true})
				return
			}
			if err != nil {
				return
			}
		}
	}()

	// From the client to the pod, until the client's CloseSend, or the
	// pod stops reading (what more the client sends is dropped).
	data := first.GetData()
	for {
		if len(data) > 0 {
			if _, err := conn.Write(data); err != nil {
				break
			}
		}
		f, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			conn.(closeWriter).CloseWrite()
			break
		}
		if err != nil { // the client cancelled: it closed the connection
			conn.Close()
			<-sentc
			return err
		}
		data = f.GetData()
	}
	<-sentc
	return nil
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

// ephemeralPort is the last source port handed out. The node's kernel
// picks a connection's source port from its ip_local_port_range,
// 32768-60999 by default; the servers log it with the client's IP.
var ephemeralPort atomic.Uint32

func nextEphemeralPort() int {
	return 32768 + int(ephemeralPort.Add(1)%(60999-32768+1))
}

// dialPod connects to port on the pod whose IP is ip, as a connect from
// the node to it would, and returns the node's end of the connection:
// the container of that sandbox whose process listens on port serves the
// other end, in memory. The connection's source is the bridge's address
// (the pod CIDR's first, the pods' gateway), where a real node's
// connections to its pods come from.
//
// A sandbox that has the IP but no running container listening on the
// port refuses at once (the kernel's RST); an IP that no sandbox has
// fails after arpTimeout, or when ctx ends. The errors are gRPC statuses
// whose messages are the errno texts (runtimev1.ConnectionRefused,
// runtimev1.NoRouteToHost).
func (s *Server) dialPod(ctx context.Context, ip string, port int32) (net.Conn, error) {
	return s.dialPodFrom(ctx, s.gateway(), ip, port)
}

// dialPodFrom is dialPod from the source address src: 127.0.0.1 for a
// port-forward, which containerd connects to localhost:port inside the
// pod's network namespace, so that the pod's server logs it from there.
func (s *Server) dialPodFrom(ctx context.Context, src netip.Addr, ip string, port int32) (net.Conn, error) {
	dst, err := podAddress(ip, port, "tcp")
	if err != nil {
		return nil, err
	}
	addr := dst.Addr()
	s.mu.Lock()
	sb := s.sandboxesByIP[addr]
	if sb == nil {
		s.mu.Unlock()
		s.log.Debug("pod network: no sandbox has the IP", "ip", ip, "port", port)
		select {
		case <-s.clock.After(arpTimeout):
			return nil, status.Error(codes.Unavailable, runtimev1.NoRouteToHost)
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
	c := s.listener(sb, "tcp", port)
	if c == nil {
		s.mu.Unlock()
		s.log.Debug("pod network: connection refused", "pod", podKeyOf(sb), "ip", ip, "port", port)
		return nil, status.Error(codes.Unavailable, runtimev1.ConnectionRefused)
	}
	img, run := s.running(sb, c)
	exited := c.proc.exited
	name := c.config.GetMetadata().GetName()
	s.mu.Unlock()

	node, pod := podnet.Pipe(&net.TCPAddr{IP: src.AsSlice(), Port: nextEphemeralPort()},
		&net.TCPAddr{IP: addr.AsSlice(), Port: int(port)})
	s.log.Debug("pod network: connected", "pod", podKeyOf(sb), "container", name, "from", node.LocalAddr(), "to", node.RemoteAddr())
	serve := img.Serve
	if serve == nil {
		serve = func(_ catalog.Running, _ int32, conn net.Conn) { defer conn.Close(); io.Copy(io.Discard, conn) }
	}
	// One goroutine serves the pod's end; another closes it if the
	// container exits first (a killed server drops its connections), and
	// ends with the serving.
	servedc := make(chan struct{})
	go func() {
		defer close(servedc)
		defer pod.Close()
		serve(run, port, pod)
	}()
	go func() {
		select {
		case <-exited:
			pod.Close()
		case <-servedc:
		}
	}()
	return node, nil
}

// gateway is the node's address on its bridge, the pod CIDR's first:
// the pods' gateway, where the node's own connections to them come from.
func (s *Server) gateway() netip.Addr { return s.opts.PodCIDR.Masked().Addr().Next() }

// podAddress is ip and port as an address on the pod network, or an
// InvalidArgument status that says why not.
func podAddress(ip string, port int32, network string) (netip.AddrPort, error) {
	addr, err := netip.ParseAddr(ip)
	if err != nil || !addr.Is4() {
		return netip.AddrPort{}, status.Errorf(codes.InvalidArgument, "dial %s %s: not an IPv4 address", network, ip)
	}
	if port < 1 || port > 65535 {
		return netip.AddrPort{}, status.Errorf(codes.InvalidArgument, "dial %s %s:%d: invalid port", network, ip, port)
	}
	return netip.AddrPortFrom(addr, uint16(port)), nil
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

// closeWriter is a connection that can shut down its writing half, as
// *net.TCPConn and dialPod's connections can.
type closeWriter interface {
	net.Conn
	CloseWrite() error
}

var _ closeWriter = (*podnet.PipeConn)(nil)
