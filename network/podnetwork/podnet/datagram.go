package podnet

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/mkube/mkube/proto/runtimev1"
)

// UDP on the pod network. A UDP socket connected to a pod's IP and port
// (net.DialUDP, netcat's -u) connects nothing: each Write is one
// datagram, sent at once, which the pod's server may answer with
// datagrams of its own, and each Read is one of those. A datagram to a
// port that nothing has bound comes back as an ICMP port unreachable,
// which the kernel reports on the socket's next read: "read: connection
// refused". A datagram to an IP that no pod has is lost without a word,
// and the reader waits for its deadline.

// datagramQueue is how many answers a socket holds before it drops the
// next, as a full receive buffer does.
const datagramQueue = 64

// DatagramConn is a connected UDP socket's end: a net.Conn whose Writes
// are datagrams handed to send, and whose Reads are the datagrams
// Receive queued. Any goroutine may call its methods at once.
type DatagramConn struct {
	local, remote *net.UDPAddr
	send          func(datagram []byte) error
	onClose       func()

	mu      sync.Mutex
	queue   [][]byte
	refused bool          // an ICMP port unreachable came: the next Read fails
	ready   chan struct{} // has a token while queue or refused has news

	closeOnce                   sync.Once
	closedc                     chan struct{}
	readDeadline, writeDeadline *deadline
}

// NewDatagramConn is a socket from local to remote that sends each
// datagram with send; onClose, if not nil, runs once, at Close.
func NewDatagramConn(local, remote *net.UDPAddr, send func([]byte) error, onClose func()) *DatagramConn {
	return &DatagramConn{local: local, remote: remote, send: send, onClose: onClose,
		ready: make(chan struct{}, 1), closedc: make(chan struct{}),
		readDeadline: newDeadline(), writeDeadline: newDeadline()}
}

// Receive queues a datagram from remote for Read (dropped if the queue
// is full, or the socket closed).
func (c *DatagramConn) Receive(datagram []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) < datagramQueue && !isClosed(c.closedc) {
		c.queue = append(c.queue, datagram)
		c.signal()
	}
}

// Unreachable is the ICMP port unreachable for a datagram sent: the next
// Read fails with ECONNREFUSED.
func (c *DatagramConn) Unreachable() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refused = true
	c.signal()
}

// signal wakes a waiting Read. Callers hold c.mu.
func (c *DatagramConn) signal() {
	select {
	case c.ready <- struct{}{}:
	default:
	}
}

// Read is the next datagram from remote, cut to len(b) as recv(2) cuts
// it, failing at once, as a socket's, once the deadline has passed.
func (c *DatagramConn) Read(b []byte) (int, error) {
	for {
		if isClosed(c.readDeadline.wait()) && !isClosed(c.closedc) {
			return 0, c.opError("read", os.ErrDeadlineExceeded)
		}
		c.mu.Lock()
		switch {
		case isClosed(c.closedc):
			c.mu.Unlock()
			return 0, c.opError("read", net.ErrClosed)
		case len(c.queue) > 0:
			n := copy(b, c.queue[0])
			c.queue = c.queue[1:]
			if len(c.queue) > 0 || c.refused {
				c.signal() // for another reader
			}
			c.mu.Unlock()
			return n, nil
		case c.refused:
			c.refused = false
			c.mu.Unlock()
			return 0, c.opError("read", os.NewSyscallError("read", syscall.ECONNREFUSED))
		}
		c.mu.Unlock()
		select {
		case <-c.ready:
		case <-c.readDeadline.wait():
			return 0, c.opError("read", os.ErrDeadlineExceeded)
		case <-c.closedc:
		}
	}
}

// Write sends b as one datagram.
func (c *DatagramConn) Write(b []byte) (int, error) {
	switch {
	case isClosed(c.closedc):
		return 0, c.opError("write", net.ErrClosed)
	case isClosed(c.writeDeadline.wait()):
		return 0, c.opError("write", os.ErrDeadlineExceeded)
	}
	if err := c.send(append([]byte(nil), b...)); err != nil {
		return 0, c.opError("write", err)
	}
	return len(b), nil
}

func (c *DatagramConn) Close() error {
	closed := false
	c.closeOnce.Do(func() {
		closed = true
		close(c.closedc)
		if c.onClose != nil {
			c.onClose()
		}
	})
	if !closed {
		return c.opError("close", net.ErrClosed)
	}
	return nil
}

func (c *DatagramConn) LocalAddr() net.Addr  { return c.local }
func (c *DatagramConn) RemoteAddr() net.Addr { return c.remote }

func (c *DatagramConn) SetDeadline(t time.Time) error {
	c.readDeadline.set(t)
	c.writeDeadline.set(t)
	return nil
}

func (c *DatagramConn) SetReadDeadline(t time.Time) error  { c.readDeadline.set(t); return nil }
func (c *DatagramConn) SetWriteDeadline(t time.Time) error { c.writeDeadline.set(t); return nil }

// String names the socket in logs: "10.244.0.1:32769->10.244.0.5:8081".
func (c *DatagramConn) String() string { return fmt.Sprintf("%s->%s", c.local, c.remote) }

// opError words err as a UDP socket's: "read udp 10.244.0.1:32769->10.244.0.5:8081: read: connection refused".
func (c *DatagramConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "udp", Source: c.local, Addr: c.remote, Err: err}
}

// DialUDP is a UDP socket connected to port on the pod IP ip through the
// runtime (or peer) that network is a client of, from src as Dial's. ctx
// bounds the setting up only: the runtime answers at once, since nothing
// is connected.
func DialUDP(ctx context.Context, network runtimev1.PodNetworkClient, src netip.Addr, ip string, port int) (*DatagramConn, error) {
	remote := &net.UDPAddr{IP: net.ParseIP(ip), Port: port}
	if remote.IP == nil {
		return nil, fmt.Errorf("dial udp %s: not an IP address", net.JoinHostPort(ip, fmt.Sprint(port)))
	}
	stream, answer, cancel, err := openDial(ctx, network, src, ip, port, "udp")
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: "udp", Addr: remote, Err: err}
	}
	from := answer.GetAddress()
	var sendMu sync.Mutex // gRPC's rule: one Send at a time
	c := NewDatagramConn(&net.UDPAddr{IP: net.ParseIP(from.GetIp()), Port: int(from.GetPort())}, remote,
		func(datagram []byte) error {
			sendMu.Lock()
			defer sendMu.Unlock()
			if stream.Send(&runtimev1.DialFrame{Data: datagram}) != nil {
				return os.NewSyscallError("sendto", syscall.ENETUNREACH) // the tunnel is gone
			}
			return nil
		}, cancel)
	go func() { // the call's only receiver, until Close cancels it
		for {
			f, err := stream.Recv()
			if err != nil {
				cancel() // frees the call, if the runtime ended it
				return
			}
			if f.GetPortUnreachable() {
				c.Unreachable()
			} else {
				c.Receive(f.GetData())
			}
		}
	}()
	return c, nil
}
