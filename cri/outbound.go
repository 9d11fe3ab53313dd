package cri

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/mkube/mkube/cri/podnet"
	"github.com/mkube/mkube/proto/runtimev1"
)

// Connections from containers. A container's processes (curl, wget and
// nc in the shell, agnhost netexec's /dial) connect to IPs as a process
// in the pod's network namespace would:
//
//   - localhost is the pod itself: its own containers' ports, reached
//     from 127.0.0.1;
//   - an IP of this node's pod CIDR is a pod on the node's bridge,
//     reached in memory (network.go);
//   - an IP of another node's pod CIDR goes through the tunnel to that
//     node's runtime (routes.go);
//   - anything else is no pod's, and fails as an unanswered ARP does.
//
// The connection comes from the pod's IP, so the server sees who called
// (netexec's /clientip). A host-network pod's comes from the node's
// bridge address, where the node's own connections to pods come from.

// dialerOf is how the processes of sb's containers connect out: a name
// is first resolved by the cluster DNS (dns_cluster.go), as the C
// library's getaddrinfo asks the pod's nameserver.
func (s *Server) dialerOf(sb *sandbox) func(ctx context.Context, address string) (net.Conn, error) {
	src := sb.ip
	lookup := s.lookupOf(sb)
	return func(ctx context.Context, address string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(address)
		if err == nil && host != "localhost" {
			if _, err := netip.ParseAddr(host); err != nil {
				ip, err := s.lookupHost(ctx, lookup, host)
				if err != nil {
					return nil, &net.OpError{Op: "dial", Net: "tcp", Err: err}
				}
				address = net.JoinHostPort(ip.String(), port)
			}
		}
		return s.dialOut(ctx, src, address)
	}
}

// dialOut connects to address, "host:port", from the pod whose IP is src
// (zero: the node's network). Its errors are Go's own for a TCP dial.
func (s *Server) dialOut(ctx context.Context, src netip.Addr, address string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: err}
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.AddrError{Err: "invalid port", Addr: address}}
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	ip, err := netip.ParseAddr(host)
	if err != nil { // a name dialerOf did not resolve: the node's own
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}}
	}
	remote := &net.TCPAddr{IP: ip.AsSlice(), Port: port}
	gateway := s.opts.PodCIDR.Masked().Addr().Next()
	from := src
	if !from.IsValid() {
		from = gateway
	}
	// A pod's hostPort on this node's address goes to the pod
	// (hostports.go), as the portmap plugin's DNAT sends it.
	if to, ok := s.hostPort(src, netip.AddrPortFrom(ip, uint16(port))); ok {
		s.log.Debug("host port: to a pod", "from", from, "to", remote, "pod", to)
		conn, err := s.dialPodFrom(ctx, from, to.Addr().String(), int32(to.Port()))
		if err != nil {
			return nil, podnet.DialError(remote, err)
		}
		return conn, nil
	}
	// A Service's address goes to one of its endpoints (services.go),
	// as kube-proxy's DNAT rewrites it before routing.
	if to, service, ok, err := s.services.translate(from, netip.AddrPortFrom(ip, uint16(port))); ok {
		if err != nil {
			s.log.Debug("service proxy: no endpoints", "service", service, "to", remote)
			return nil, podnet.DialError(remote, err)
		}
		s.log.Debug("service proxy: to an endpoint", "service", service, "from", from, "to", remote, "endpoint", to)
		ip, port = to.Addr(), int(to.Port())
		if !s.opts.PodCIDR.Contains(ip) && s.routes.lookup(ip) == nil {
			// An endpoint outside the pod network is a host's, as the
			// API server behind default/kubernetes: the node reaches it
			// on its own network, as kube-proxy's SNAT does.
			var d net.Dialer
			return d.DialContext(ctx, "tcp", to.String())
		}
	}
	if s.isNodeAddress(src, ip) && !ip.IsLoopback() {
		// The node itself, where no server of its own is simulated: its
		// kernel refuses at once.
		return nil, podnet.DialError(remote, status.Error(codes.Unavailable, runtimev1.ConnectionRefused))
	}
	var conn net.Conn
	switch peer := s.routes.lookup(ip); {
	case ip.IsLoopback():
		if !src.IsValid() { // the node's loopback: no server of the node's own is simulated
			return nil, podnet.DialError(remote, status.Error(codes.Unavailable, runtimev1.ConnectionRefused))
		}
		conn, err = s.dialPodFrom(ctx, ip, src.String(), int32(port))
	case s.opts.PodCIDR.Contains(ip) || peer == nil:
		conn, err = s.dialPodFrom(ctx, from, ip.String(), int32(port))
	default:
		s.log.Debug("pod network: to a peer", "from", from, "to", remote)
		return podnet.Dial(ctx, peer, from, ip.String(), port)
	}
	if err != nil {
		return nil, podnet.DialError(remote, err)
	}
	if ip.IsLoopback() { // the server saw 127.0.0.1 call 127.0.0.1
		return &loopbackConn{Conn: conn, remote: remote}, nil
	}
	return conn, nil
}

// loopbackConn is a connection to the pod's own localhost: its far end is
// 127.0.0.1, not the pod's IP dialPodFrom connected to.
type loopbackConn struct {
	net.Conn
	remote net.Addr
}

func (c *loopbackConn) RemoteAddr() net.Addr { return c.remote }
func (c *loopbackConn) CloseWrite() error    { return c.Conn.(closeWriter).CloseWrite() }
func (c *loopbackConn) String() string       { return fmt.Sprintf("%s->%s", c.LocalAddr(), c.remote) }
