package podnetwork

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/mkube/mkube/network/podnetwork/podnet"
	"github.com/mkube/mkube/proto/runtimev1"
)

// Connections from containers. A container's processes (curl, wget and
// nc in the shell, agnhost netexec's /dial) connect to IPs, over TCP or
// UDP (datagrams.go), as a process in the pod's network namespace
// would; route says where each goes. The connection comes from the
// pod's IP, so the server sees who called (netexec's /clientip). A
// host-network pod's comes from the node's bridge address, where the
// node's own connections to pods come from. The runtime resolves a name
// first (network/dns), and hands DialOut an address.

// DialOut connects to address, "host:port", over network ("tcp" or
// "udp") from the pod whose IP is src (zero: the node's network). Its
// errors are Go's own for a dial.
func (n *Node) DialOut(ctx context.Context, src netip.Addr, network, address string) (net.Conn, error) {
	if network != "tcp" && network != "udp" {
		return nil, &net.OpError{Op: "dial", Net: network, Err: net.UnknownNetworkError(network)}
	}
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		return nil, &net.OpError{Op: "dial", Net: network, Err: &net.AddrError{Err: "invalid port", Addr: address}}
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	ip, err := netip.ParseAddr(host)
	if err != nil { // a name the runtime did not resolve: the node's own
		return nil, &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}}
	}
	dst := netip.AddrPortFrom(ip, uint16(port))
	h := n.route(src, network, dst)
	if network == "udp" {
		remote := net.UDPAddrFromAddrPort(dst)
		return dialled(remote)(n.dialUDP(ctx, h, remote))
	}
	remote := net.TCPAddrFromAddrPort(dst)
	return dialled(remote)(n.dialTCP(ctx, h, remote))
}

// dialled makes a connection, or its error, what the client sees: its
// far end is the address it dialled (127.0.0.1, a Service's address),
// whatever pod the node's rules sent it to, as NAT is invisible to a
// socket.
func dialled(remote net.Addr) func(net.Conn, error) (net.Conn, error) {
	return func(conn net.Conn, err error) (net.Conn, error) {
		var op *net.OpError
		switch {
		case err != nil && errors.As(err, &op) && op.Op == "dial":
			op.Addr = remote
			return nil, err
		case err != nil:
			return nil, err
		case conn.RemoteAddr().String() == remote.String():
			return conn, nil
		}
		return &dialledConn{Conn: conn, remote: remote}, nil
	}
}

// hop is where the node sends a connection from a container, once its
// NAT rules and routes have had their say.
type hop struct {
	kind hopKind
	from netip.Addr     // the source the server sees; toHost: the node's address it leaves from (zero: the host picks)
	to   netip.AddrPort // the server: a pod's, or a host's (toHost)
	peer runtimev1.PodNetworkClient
}

type hopKind int

const (
	toPod     hopKind = iota // a sandbox of this node, or no sandbox's IP
	toPeer                   // a pod of another node, through its runtime
	toHost                   // a host outside the pod network, on the node's own network
	toRefused                // the node itself answers: connection refused (ICMP port unreachable for UDP)
)

// route is where a connection from src (zero: the node's network) to
// dst over network goes:
//
//   - a pod's hostPort on this node's address goes to the pod
//     (Sandboxes.HostPort), as the portmap plugin's DNAT sends it;
//   - a Service's address goes to one of its endpoints (network/proxy),
//     as kube-proxy's DNAT rewrites it before routing; a Service
//     without endpoints refuses;
//   - 127.0.0.1, and any other loopback address that is no Node's, is
//     the pod itself (the node's own loopback, from the node's network,
//     refuses: no server of the node's own is simulated);
//   - a Node's address other than 127.0.0.1 (this node's or another's)
//     is dialled on the host's network, from this node's address, as
//     the node's kernel masquerades a pod's packets to it (doc.go:
//     Nodes' addresses);
//   - an IP of this node's pod CIDR (or of no route's) is a sandbox of
//     this node, reached in memory (bridge.go);
//   - an IP of another node's pod CIDR goes to that node's runtime
//     (routes.go).
func (n *Node) route(src netip.Addr, network string, dst netip.AddrPort) hop {
	from := src
	if !from.IsValid() {
		from = n.Gateway()
	}
	if to, ok := n.hostPort(src, network, dst); ok {
		n.Log.Debug("host port: to a pod", "from", from, "to", dst, "protocol", network, "pod", to)
		return hop{kind: toPod, from: from, to: to}
	}
	if to, service, ok, err := n.Services.Translate(from, network, dst); ok {
		if err != nil {
			n.Log.Debug("service proxy: no endpoints", "service", service, "to", dst, "protocol", network)
			return hop{kind: toRefused, from: from}
		}
		n.Log.Debug("service proxy: to an endpoint", "service", service, "from", from, "to", dst, "protocol", network, "endpoint", to)
		if !n.PodCIDR.Contains(to.Addr()) && n.Routes.Lookup(to.Addr()) == nil {
			// An endpoint outside the pod network is a host's, as the
			// API server behind default/kubernetes: the node reaches it
			// on its own network, as kube-proxy's SNAT does.
			return hop{kind: toHost, to: to}
		}
		dst = to
	}
	ip := dst.Addr()
	switch peer := n.Routes.Lookup(ip); {
	case src.IsValid() && isPodLoopback(ip, n.Services.IsNodeIP):
		return hop{kind: toPod, from: ip, to: netip.AddrPortFrom(src, dst.Port())} // the server sees 127.0.0.1 call 127.0.0.1
	case n.Services.IsNodeIP(ip) && !isLocalhost(ip):
		n.Log.Debug("pod network: to a node's address, on the host's network", "from", from, "to", dst, "protocol", network)
		return hop{kind: toHost, from: n.Services.LocalNodeIP(), to: dst}
	case ip.IsLoopback(): // the node's loopback
		return hop{kind: toRefused, from: ip}
	case n.PodCIDR.Contains(ip) || peer == nil:
		return hop{kind: toPod, from: from, to: dst}
	default:
		n.Log.Debug("pod network: to a peer", "from", from, "to", dst, "protocol", network)
		return hop{kind: toPeer, from: from, to: dst, peer: peer}
	}
}

// dialTCP connects to remote along h.
func (n *Node) dialTCP(ctx context.Context, h hop, remote *net.TCPAddr) (net.Conn, error) {
	switch h.kind {
	case toRefused:
		return nil, podnet.DialError(remote, status.Error(codes.Unavailable, runtimev1.ConnectionRefused))
	case toHost:
		return dialHost(ctx, "tcp", h.from, h.to)
	case toPeer:
		return podnet.Dial(ctx, h.peer, h.from, h.to.Addr().String(), int(h.to.Port()))
	}
	conn, err := n.DialPodFrom(ctx, h.from, h.to.Addr().String(), int32(h.to.Port()))
	if err != nil {
		return nil, podnet.DialError(remote, err)
	}
	return conn, nil
}

// dialledConn is a connection whose far end is what its client dialled,
// not the pod the node's rules sent it to (dialled).
type dialledConn struct {
	net.Conn
	remote net.Addr
}

func (c *dialledConn) RemoteAddr() net.Addr { return c.remote }
func (c *dialledConn) String() string       { return fmt.Sprintf("%s->%s", c.LocalAddr(), c.remote) }

// CloseWrite is TCP's FIN; a UDP socket has none to send.
func (c *dialledConn) CloseWrite() error {
	if cw, ok := c.Conn.(podnet.CloseWriter); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ServiceRules is the node's Service rules, which a connection meets
// before it is routed, as kube-proxy's DNAT rules in the kernel's nat
// table: network/proxy's Table.
type ServiceRules interface {
	// Translate is where a connection from client to dst over network
	// goes: dst itself if no rule holds dst (ok false), else one of the
	// Service's endpoints, or err if it has none.
	Translate(client netip.Addr, network string, dst netip.AddrPort) (to netip.AddrPort, service string, ok bool, err error)
	// IsLocalNodeIP reports whether ip is one of this node's own
	// addresses.
	IsLocalNodeIP(ip netip.Addr) bool
	// IsNodeIP reports whether ip is an address of one of the
	// cluster's Nodes, this node's included.
	IsNodeIP(ip netip.Addr) bool
	// LocalNodeIP is this node's own address, or zero if unknown.
	LocalNodeIP() netip.Addr
}

// isPodLoopback reports whether ip, dialled from a pod, is the pod's own
// loopback: 127.0.0.1 always, as localhost; any other loopback address
// unless it is a Node's (isNodeIP), which on a single host is how each
// node gets an address of its own (doc.go: Nodes' addresses).
func isPodLoopback(ip netip.Addr, isNodeIP func(netip.Addr) bool) bool {
	return ip.IsLoopback() && (isLocalhost(ip) || !isNodeIP(ip))
}

// isLocalhost reports whether ip is localhost's, 127.0.0.1 or ::1:
// whoever dials it, its own loopback, even where a Node has it.
func isLocalhost(ip netip.Addr) bool {
	return ip == netip.AddrFrom4([4]byte{127, 0, 0, 1}) || ip == netip.IPv6Loopback()
}

// dialHost connects to to on the host's network, as the node itself
// would, from the node's address from if the host has it (a node
// simulated at an address the host lacks dials from the host's own).
func dialHost(ctx context.Context, network string, from netip.Addr, to netip.AddrPort) (net.Conn, error) {
	if from.IsValid() {
		d := net.Dialer{LocalAddr: localAddr(network, from)}
		conn, err := d.DialContext(ctx, network, to.String())
		if !errors.Is(err, syscall.EADDRNOTAVAIL) {
			return conn, err
		}
	}
	var d net.Dialer
	return d.DialContext(ctx, network, to.String())
}

// localAddr is ip, any port, as network's address type.
func localAddr(network string, ip netip.Addr) net.Addr {
	if network == "udp" {
		return &net.UDPAddr{IP: ip.AsSlice()}
	}
	return &net.TCPAddr{IP: ip.AsSlice()}
}

// Host ports. A container port with a hostPort is reachable at the
// node's address: the CNI portmap plugin, which containerd calls with
// the sandbox's port mappings, DNATs HOST-IP:HOST-PORT to the pod's
// IP and container port (a hostIP of "" or 0.0.0.0 is every address of
// the node, 127.0.0.1 included). Here the node's addresses are its
// loopback, for its host-network processes, and the addresses its
// kubelet names as its own (SetServices' local_node_ips).

// isNodeAddress reports whether a connection from src (zero: the
// node's network) to ip is to this node itself.
func (n *Node) isNodeAddress(src, ip netip.Addr) bool {
	return (ip.IsLoopback() && !src.IsValid()) || n.Services.IsLocalNodeIP(ip)
}

// hostPort is where a connection from src to dst over network ("tcp",
// "udp") goes if a pod of this node maps dst's port on dst's address
// for that protocol.
func (n *Node) hostPort(src netip.Addr, network string, dst netip.AddrPort) (netip.AddrPort, bool) {
	if !n.isNodeAddress(src, dst.Addr()) {
		return netip.AddrPort{}, false
	}
	return n.Sandboxes.HostPort(network, dst)
}
