package podnetwork

import (
	"context"
	"net"
	"net/netip"

	"github.com/mkube/mkube/network/podnetwork/podnet"
	"github.com/mkube/mkube/proto/runtimev1"
)

// UDP on the pod network. A datagram goes where a TCP connection would
// (route in outbound.go: host ports, Services, routes), but nothing is
// connected: each datagram is handed, as it is sent, to the running
// container of the sandbox with the IP that has bound the port, whose
// image answers it (catalog.Image.ServeDatagram) with the datagrams its
// server would send back. A port nothing has bound answers with an ICMP
// port unreachable; an IP no sandbox has loses the datagram, as an
// unanswered ARP does.

// dialUDP is a UDP socket connected to remote along h.
func (n *Node) dialUDP(ctx context.Context, h hop, remote *net.UDPAddr) (net.Conn, error) {
	local := &net.UDPAddr{IP: h.from.AsSlice(), Port: nextEphemeralPort()}
	var c *podnet.DatagramConn
	switch h.kind {
	case toHost:
		return dialHost(ctx, "udp", h.from, h.to)
	case toPeer:
		return podnet.DialUDP(ctx, h.peer, h.from, h.to.Addr().String(), int(h.to.Port()))
	case toRefused:
		c = podnet.NewDatagramConn(local, remote, func([]byte) error { c.Unreachable(); return nil }, nil)
	default:
		from := netip.AddrPortFrom(h.from, uint16(local.Port))
		c = podnet.NewDatagramConn(local, remote, func(datagram []byte) error {
			replies, unreachable := n.sendDatagram(from, h.to, datagram)
			for _, r := range replies {
				c.Receive(r)
			}
			if unreachable {
				c.Unreachable()
			}
			return nil
		}, nil)
	}
	return c, nil
}

// sendDatagram delivers datagram from from to to, a sandbox's IP and a
// UDP port: it returns the server's answers, or unreachable if the
// sandbox has no running container that has bound the port. A datagram
// to an IP that no sandbox of this node has is lost.
func (n *Node) sendDatagram(from, to netip.AddrPort, datagram []byte) (replies [][]byte, unreachable bool) {
	pod, l, found := n.Sandboxes.Listener("udp", to.Addr(), int32(to.Port()))
	if !found {
		n.Log.Debug("pod network: datagram lost: no sandbox has the IP", "from", from, "to", to)
		return nil, false
	}
	if l == nil {
		n.Log.Debug("pod network: port unreachable", "pod", pod, "from", from, "to", to)
		return nil, true
	}
	n.Log.Debug("pod network: datagram", "pod", pod, "container", l.Container, "from", from, "to", to, "bytes", len(datagram))
	if l.ServeDatagram == nil {
		return nil, false
	}
	return l.ServeDatagram(net.UDPAddrFromAddrPort(from), datagram), false
}

// serveDatagrams is a Dial call with protocol udp: the datagrams of a
// socket from from (a peer's pod, or the node) to dst, one per frame,
// each delivered to this node's sandboxes only. The call's first answer
// names the socket's source at once; then each datagram's answers come
// back as frames, and a port nothing has bound as a port_unreachable
// frame. It ends when the client ends its sending or goes.
func (n *Node) serveDatagrams(stream runtimev1.PodNetwork_DialServer, from netip.Addr, dst *runtimev1.Address) error {
	to, err := podAddress(dst.GetIp(), dst.GetPort(), "udp")
	if err != nil {
		return err
	}
	src := netip.AddrPortFrom(from, uint16(nextEphemeralPort()))
	if err := stream.Send(&runtimev1.DialFrame{Address: &runtimev1.Address{Ip: from.String(), Port: int32(src.Port())}}); err != nil {
		return err
	}
	for {
		f, err := stream.Recv()
		if err != nil {
			return nil // the client's CloseSend, or its cancel: the socket is closed
		}
		replies, unreachable := n.sendDatagram(src, to, f.GetData())
		for _, r := range replies {
			if err := stream.Send(&runtimev1.DialFrame{Data: r}); err != nil {
				return err
			}
		}
		if unreachable {
			if err := stream.Send(&runtimev1.DialFrame{PortUnreachable: true}); err != nil {
				return err
			}
		}
	}
}
