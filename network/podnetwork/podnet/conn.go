package podnet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/mkube/mkube/proto/runtimev1"
)

// dialFrameSize is the most bytes a frame carries: io.Copy's buffer, so
// a copy into the connection sends a frame per read.
const dialFrameSize = 32 << 10

// closeLinger is how long a closed connection waits for the pod's side
// to finish after the client's FIN, as a socket's close lets the kernel
// deliver what was written: then the call is cancelled, which drops the
// connection at once. A pod's server ends on the FIN in microseconds.
const closeLinger = 5 * time.Second

// Dial connects to port on the pod IP ip through the runtime (or peer)
// that network is a client of; src, if valid, is the pod address the
// connection comes from (a peer's pod), else the runtime's node. ctx
// bounds the connecting only, as net.Dialer's DialContext does: the
// connection lives until Close. Its errors are Go's own for a TCP dial:
//
//	dial tcp 10.244.0.5:8080: connect: connection refused   (nothing listens; errors.Is syscall.ECONNREFUSED)
//	dial tcp 10.244.0.9:80: connect: no route to host       (no pod has the IP; syscall.EHOSTUNREACH)
//	dial tcp 10.244.0.9:80: i/o timeout                     (ctx's deadline came first; a net.Error with Timeout)
func Dial(ctx context.Context, network runtimev1.PodNetworkClient, src netip.Addr, ip string, port int) (net.Conn, error) {
	remote := &net.TCPAddr{IP: net.ParseIP(ip), Port: port}
	if remote.IP == nil {
		return nil, fmt.Errorf("dial tcp %s: not an IP address", net.JoinHostPort(ip, fmt.Sprint(port)))
	}
	stream, answer, cancel, err := openDial(ctx, network, src, ip, port, "")
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: remote, Err: err}
	}
	from := answer.GetAddress()
	c := &podConn{stream: stream, cancel: cancel,
		local:  &net.TCPAddr{IP: net.ParseIP(from.GetIp()), Port: int(from.GetPort())},
		remote: remote, framec: make(chan []byte), closedc: make(chan struct{}),
		readDeadline: newDeadline(), writeDeadline: newDeadline()}
	go c.receive()
	return c, nil
}

// openDial opens a Dial call to ip, an IP, and port over protocol ("" is TCP, or
// "udp"), from src if valid, and waits for the runtime's first frame
// (once connected, for TCP) no longer than ctx allows. The call outlives
// ctx: cancel, which the caller's Close calls, is what ends it. Its
// error is the syscall or Go error a dial fails with.
func openDial(ctx context.Context, network runtimev1.PodNetworkClient, src netip.Addr, ip string, port int, protocol string) (
	runtimev1.PodNetwork_DialClient, *runtimev1.DialFrame, context.CancelFunc, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, contextError(err)
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stream, err := network.Dial(sctx)
	if err == nil {
		first := &runtimev1.DialFrame{Address: &runtimev1.Address{Ip: ip, Port: int32(port)}, Protocol: protocol}
		if src.IsValid() {
			first.Source = src.String()
		}
		err = stream.Send(first)
	}
	var answer *runtimev1.DialFrame
	if err == nil {
		stop := context.AfterFunc(ctx, cancel) // ctx's end ends the Recv
		answer, err = stream.Recv()
		if !stop() {
			cancel()
			return nil, nil, nil, contextError(ctx.Err())
		}
	}
	if err != nil {
		cancel()
		return nil, nil, nil, dialError(err)
	}
	return stream, answer, cancel, nil
}

// DialError is err, why a dial to remote through the pod network failed
// (a PodNetwork status, or the runtime's own for its sandboxes), as Go's
// error for a TCP dial: "dial tcp 10.244.0.5:8080: connect: connection
// refused".
func DialError(remote *net.TCPAddr, err error) error {
	return &net.OpError{Op: "dial", Net: "tcp", Addr: remote, Err: dialError(err)}
}

// dialError is what a failed Dial call means for a TCP connect: the
// runtime's errno texts become the syscall errors they name.
func dialError(err error) error {
	st := status.Convert(err)
	switch {
	case st.Code() == codes.Unavailable && st.Message() == runtimev1.ConnectionRefused:
		return os.NewSyscallError("connect", syscall.ECONNREFUSED)
	case st.Code() == codes.Unavailable && st.Message() == runtimev1.NoRouteToHost:
		return os.NewSyscallError("connect", syscall.EHOSTUNREACH)
	case st.Code() == codes.DeadlineExceeded:
		return timeoutError{}
	case st.Code() == codes.Canceled:
		return canceledError{}
	}
	return fmt.Errorf("pod network: %w", err)
}

func contextError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return timeoutError{}
	}
	return canceledError{}
}

// timeoutError is Go's error for a dial whose deadline passed: "i/o
// timeout", a net.Error whose Timeout is true, and, as Go's,
// errors.Is(err, context.DeadlineExceeded).
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }
func (timeoutError) Is(err error) bool {
	return err == context.DeadlineExceeded || err == os.ErrDeadlineExceeded
}

// canceledError is Go's error for a dial whose context was canceled.
type canceledError struct{}

func (canceledError) Error() string     { return "operation was canceled" }
func (canceledError) Is(err error) bool { return err == context.Canceled }

// podConn is the client's end of a connection to a pod: a net.Conn over
// a PodNetwork Dial call. Any goroutine may call its methods at once, as
// net.Conn allows.
type podConn struct {
	stream        runtimev1.PodNetwork_DialClient
	cancel        context.CancelFunc // ends the call: the connection is gone
	local, remote net.Addr

	// framec carries the pod's data, in order, from receive's goroutine
	// to Read; receive closes it at the pod's end of writing (or the
	// call's), having set recvErr first if the call failed.
	framec  chan []byte
	recvErr error

	readMu  sync.Mutex // one Read at a time
	pending []byte     // the rest of the frame Read returned part of

	writeMu  sync.Mutex // one Send at a time (gRPC's rule), and CloseSend
	wroteEOF bool       // CloseWrite or Close sent our FIN

	closeOnce sync.Once
	closedc   chan struct{}              // closed by Close
	linger    atomic.Pointer[time.Timer] // Close's closeLinger, stopped when the call ends

	readDeadline, writeDeadline *deadline
}

// receive reads the pod's frames until the call ends, then cancels it
// (which frees it). It is the call's only receiver. Once the connection
// is closed, what still comes is dropped.
func (c *podConn) receive() {
	defer func() {
		if t := c.linger.Load(); t != nil {
			t.Stop()
		}
		c.cancel()
	}()
	eof := false
	for {
		f, err := c.stream.Recv()
		if err != nil {
			if !eof {
				if !errors.Is(err, io.EOF) {
					c.recvErr = err
				}
				close(c.framec)
			}
			return
		}
		if eof {
			continue
		}
		if data := f.GetData(); len(data) > 0 {
			select {
			case c.framec <- data:
			case <-c.closedc:
			}
		}
		if f.GetCloseWrite() {
			eof = true
			close(c.framec)
		}
	}
}

func (c *podConn) Read(b []byte) (int, error) {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	switch {
	case isClosed(c.closedc):
		return 0, c.opError("read", net.ErrClosed)
	case isClosed(c.readDeadline.wait()):
		return 0, c.opError("read", os.ErrDeadlineExceeded)
	}
	if len(c.pending) == 0 {
		select {
		case data, ok := <-c.framec:
			if !ok {
				if c.recvErr != nil && !isClosed(c.closedc) {
					return 0, c.opError("read", os.NewSyscallError("read", syscall.ECONNRESET))
				}
				return 0, io.EOF
			}
			c.pending = data
		case <-c.readDeadline.wait():
			return 0, c.opError("read", os.ErrDeadlineExceeded)
		case <-c.closedc:
			return 0, c.opError("read", net.ErrClosed)
		}
	}
	n := copy(b, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// Write sends b in frames. A write deadline that passes while a frame
// waits for the runtime (gRPC's flow control: the pod is not reading)
// cancels the call: the connection is broken after a write timeout.
func (c *podConn) Write(b []byte) (int, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	switch {
	case isClosed(c.closedc):
		return 0, c.opError("write", net.ErrClosed)
	case isClosed(c.writeDeadline.wait()):
		return 0, c.opError("write", os.ErrDeadlineExceeded)
	case c.wroteEOF:
		return 0, c.opError("write", os.NewSyscallError("write", syscall.EPIPE))
	}
	sentc := make(chan struct{})
	defer close(sentc)
	var timedOut atomic.Bool
	go func() { // ends with this Write
		select {
		case <-c.writeDeadline.wait():
			timedOut.Store(true)
			c.cancel()
		case <-sentc:
		}
	}()
	n := 0
	for len(b) > 0 {
		chunk := b[:min(len(b), dialFrameSize)]
		if err := c.stream.Send(&runtimev1.DialFrame{Data: chunk}); err != nil {
			switch {
			case timedOut.Load():
				return n, c.opError("write", os.ErrDeadlineExceeded)
			case isClosed(c.closedc):
				return n, c.opError("write", net.ErrClosed)
			}
			return n, c.opError("write", os.NewSyscallError("write", syscall.EPIPE)) // the pod's side is gone
		}
		n += len(chunk)
		b = b[len(chunk):]
	}
	return n, nil
}

// CloseWrite sends the client's FIN: the pod reads end-of-file, and can
// still answer.
func (c *podConn) CloseWrite() error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if isClosed(c.closedc) {
		return c.opError("close", net.ErrClosed)
	}
	if !c.wroteEOF {
		c.wroteEOF = true
		return c.stream.CloseSend()
	}
	return nil
}

// Close ends the connection for the kubelet: Reads and Writes fail with
// "use of closed network connection" from now on. It sends the FIN and
// leaves the call closeLinger to end as the pod's side finishes, or, if
// a Write is blocked, cancels it at once.
func (c *podConn) Close() error {
	closed := false
	c.closeOnce.Do(func() {
		closed = true
		close(c.closedc)
		if !c.writeMu.TryLock() {
			c.cancel()
			return
		}
		if !c.wroteEOF {
			c.wroteEOF = true
			c.stream.CloseSend()
		}
		c.writeMu.Unlock()
		c.linger.Store(time.AfterFunc(closeLinger, c.cancel))
	})
	if !closed {
		return c.opError("close", net.ErrClosed)
	}
	return nil
}

func (c *podConn) LocalAddr() net.Addr  { return c.local }
func (c *podConn) RemoteAddr() net.Addr { return c.remote }

func (c *podConn) SetDeadline(t time.Time) error {
	c.readDeadline.set(t)
	c.writeDeadline.set(t)
	return nil
}

func (c *podConn) SetReadDeadline(t time.Time) error  { c.readDeadline.set(t); return nil }
func (c *podConn) SetWriteDeadline(t time.Time) error { c.writeDeadline.set(t); return nil }

// opError words err as a TCP socket's: "read tcp 10.244.0.1:32769->10.244.0.5:80: i/o timeout".
func (c *podConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.local, Addr: c.remote, Err: err}
}

// deadline is a point in time that Reads (or Writes) wait for: its
// channel is closed while the deadline has passed. Setting it again
// keeps the channel if it is still open, so that a Read already waiting
// sees the new deadline, as net.Conn requires of pending calls.
type deadline struct {
	mu    sync.Mutex
	timer *time.Timer
	c     chan struct{}
}

func newDeadline() *deadline { return &deadline{c: make(chan struct{})} }

// set moves the deadline to t; the zero t is none.
func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil && !d.timer.Stop() {
		<-d.c // the timer fired: its func closes d.c, if it has not yet
	}
	d.timer = nil
	passed := isClosed(d.c)
	if until := time.Until(t); t.IsZero() || until > 0 {
		if passed {
			d.c = make(chan struct{})
		}
		if !t.IsZero() {
			c := d.c
			d.timer = time.AfterFunc(until, func() { close(c) })
		}
		return
	}
	if !passed {
		close(d.c)
	}
}

// wait is closed once the deadline has passed.
func (d *deadline) wait() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.c
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
