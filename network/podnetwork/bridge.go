package podnetwork

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/network/podnetwork/podnet"
	"github.com/mkube/mkube/proto/runtimev1"
)

// The pod network of one node. On a real node each sandbox is a network
// namespace with a veth on the node's bridge, and the kubelet's httpGet
// and tcpSocket probes connect to the pod's IP from the node. Here the
// pod IPs (ipam.go) are no host's addresses, so the node reaches its
// pods through the runtime: the PodNetwork service (proto/runtime.proto)
// carries one TCP connection per Dial call (or one UDP socket's
// datagrams, datagrams.go), and the runtime connects it, in memory, to
// the container whose process listens on the port, which answers with
// what its image serves (catalog.Image.Serve).
//
// A connection costs two goroutines while it is open and nothing once
// it is closed: an idle container has no listener running.

// ARPTimeout is how long connecting to an IP that no sandbox has takes
// to fail: the node's kernel sends ARP requests for it on the bridge
// (mcast_solicit 3, one a second) and, unanswered, fails the connect
// with EHOSTUNREACH. A probe with the default timeoutSeconds of 1 sees
// its own i/o timeout first, as on a real node.
const ARPTimeout = 3 * time.Second

// Node is one node's pod network: its bridge, where its sandboxes are
// reached in memory, the Service rules a connection meets first
// (outbound.go) and the routes to the other nodes' pods (routes.go). The
// runtime makes one and tells it about its sandboxes (Sandboxes).
type Node struct {
	PodCIDR   netip.Prefix // this node's pods' addresses
	Sandboxes Sandboxes
	Services  ServiceRules // kube-proxy's rules (network/proxy's Table)
	Routes    *RouteTable
	Clock     clock.Clock
	Log       *slog.Logger
}

// Sandboxes is what the pod network asks the runtime about its
// sandboxes, as a node's kernel knows its veths and sockets.
type Sandboxes interface {
	// Listener is the container of the ready sandbox whose IP is ip
	// whose process listens on port over network ("tcp", "udp"): pod
	// names the sandbox's pod, and l is nil if nothing listens there;
	// found is false if no sandbox has the IP.
	Listener(network string, ip netip.Addr, port int32) (pod string, l *Listener, found bool)
	// HostPort is where a ready sandbox's port mapping sends a
	// connection to dst, one of the node's addresses, over network
	// ("tcp", "udp"): the pod's IP and container port.
	HostPort(network string, dst netip.AddrPort) (netip.AddrPort, bool)
}

// Listener is a container's server on a port, as the runtime saw it when
// asked.
type Listener struct {
	Container string // its name, for the logs
	// Serve answers one connection (nil: reads it and answers nothing).
	Serve func(conn net.Conn)
	// ServeDatagram answers one datagram from from with the server's
	// (nil: none).
	ServeDatagram func(from *net.UDPAddr, datagram []byte) [][]byte
	// Exited is closed when the container exits: its connections drop.
	Exited <-chan struct{}
}

// ServeDial carries one connection of a PodNetwork Dial call, from the
// node, or from src, a peer's pod (routes.go). The client's first frame
// names where to connect; once connected, the runtime answers with the
// source address the pod sees, then pumps bytes both ways: this
// goroutine from the client to the pod, one more from the pod to the
// client (the stream's only sender from then on). The client's
// CloseSend is its FIN, passed on with CloseWrite; the pod's end of
// writing is a close_write frame. The call ends once the pod's side is
// done and the client's is done or gone; the client cancelling the call
// (its Close) closes the connection at once.
func (n *Node) ServeDial(stream runtimev1.PodNetwork_DialServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	dst := first.GetAddress()
	if dst == nil {
		return status.Error(codes.InvalidArgument, "the first frame must name the destination address")
	}
	ctx := stream.Context()
	from := n.Gateway()                      // the node's
	if src := first.GetSource(); src != "" { // a peer's pod (routes.go)
		addr, perr := netip.ParseAddr(src)
		if perr != nil || !addr.Is4() {
			return status.Errorf(codes.InvalidArgument, "source %q is not an IPv4 address", src)
		}
		from = addr
	}
	switch first.GetProtocol() {
	case "", "tcp":
	case "udp":
		return n.serveDatagrams(stream, from, dst) // datagrams.go
	default:
		return status.Errorf(codes.InvalidArgument, "protocol %q: want tcp or udp", first.GetProtocol())
	}
	conn, err := n.DialPodFrom(ctx, from, dst.GetIp(), dst.GetPort())
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
	// closed when it is done; ServeDial returns only after, since a
	// stream must not be sent on once its handler has returned.
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
			conn.(podnet.CloseWriter).CloseWrite()
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

// ephemeralPort is the last source port handed out. The node's kernel
// picks a connection's source port from its ip_local_port_range,
// 32768-60999 by default; the servers log it with the client's IP.
var ephemeralPort atomic.Uint32

func nextEphemeralPort() int {
	return 32768 + int(ephemeralPort.Add(1)%(60999-32768+1))
}

// DialPod connects to port on the pod whose IP is ip, as a connect from
// the node to it would, and returns the node's end of the connection:
// the container of that sandbox whose process listens on port serves the
// other end, in memory. The connection's source is the bridge's address
// (the pod CIDR's first, the pods' gateway), where a real node's
// connections to its pods come from.
//
// A sandbox that has the IP but no running container listening on the
// port refuses at once (the kernel's RST); an IP that no sandbox has
// fails after ARPTimeout, or when ctx ends. The errors are gRPC statuses
// whose messages are the errno texts (runtimev1.ConnectionRefused,
// runtimev1.NoRouteToHost).
func (n *Node) DialPod(ctx context.Context, ip string, port int32) (net.Conn, error) {
	return n.DialPodFrom(ctx, n.Gateway(), ip, port)
}

// DialPodFrom is DialPod from the source address src: 127.0.0.1 for a
// port-forward, which containerd connects to localhost:port inside the
// pod's network namespace, so that the pod's server logs it from there.
func (n *Node) DialPodFrom(ctx context.Context, src netip.Addr, ip string, port int32) (net.Conn, error) {
	dst, err := podAddress(ip, port, "tcp")
	if err != nil {
		return nil, err
	}
	addr := dst.Addr()
	pod, l, found := n.Sandboxes.Listener("tcp", addr, port)
	if !found {
		n.Log.Debug("pod network: no sandbox has the IP", "ip", ip, "port", port)
		select {
		case <-n.Clock.After(ARPTimeout):
			return nil, status.Error(codes.Unavailable, runtimev1.NoRouteToHost)
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
	if l == nil {
		n.Log.Debug("pod network: connection refused", "pod", pod, "ip", ip, "port", port)
		return nil, status.Error(codes.Unavailable, runtimev1.ConnectionRefused)
	}

	node, podEnd := podnet.Pipe(&net.TCPAddr{IP: src.AsSlice(), Port: nextEphemeralPort()},
		&net.TCPAddr{IP: addr.AsSlice(), Port: int(port)})
	n.Log.Debug("pod network: connected", "pod", pod, "container", l.Container, "from", node.LocalAddr(), "to", node.RemoteAddr())
	serve := l.Serve
	if serve == nil {
		serve = func(conn net.Conn) { defer conn.Close(); io.Copy(io.Discard, conn) }
	}
	// One goroutine serves the pod's end; another closes it if the
	// container exits first (a killed server drops its connections), and
	// ends with the serving.
	servedc := make(chan struct{})
	go func() {
		defer close(servedc)
		defer podEnd.Close()
		serve(podEnd)
	}()
	go func() {
		select {
		case <-l.Exited:
			podEnd.Close()
		case <-servedc:
		}
	}()
	return node, nil
}

// Gateway is the node's address on its bridge, the pod CIDR's first:
// the pods' gateway, where the node's own connections to them come from.
func (n *Node) Gateway() netip.Addr { return n.PodCIDR.Masked().Addr().Next() }

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

var _ podnet.CloseWriter = (*podnet.PipeConn)(nil)
