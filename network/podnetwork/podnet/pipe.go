package podnet

import (
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// socketBuffer is how many bytes one direction of a Pipe holds that the
// reader has not read yet: a writer past it waits, as a TCP sender waits
// for the receiver's window.
const socketBuffer = 256 << 10

// Pipe is an in-memory TCP connection from a to b: the two ends, each a
// net.Conn whose writes the other reads, in order. Unlike net.Pipe, a
// write returns once its bytes are buffered (up to socketBuffer each
// way), as the kernel's socket buffers take them, so both ends may write
// at once: a TLS 1.3 handshake does, its client sending its
// ChangeCipherSpec while the server's first flight is still being read.
// Either end can shut down its writing (CloseWrite, TCP's FIN): the
// other reads end-of-file after the data, while the other way stays
// open. Closing an end is its FIN too; the other end's writes then fail
// with EPIPE.
func Pipe(a, b net.Addr) (*PipeConn, *PipeConn) {
	ab, ba := newStream(), newStream()
	return &PipeConn{in: ba, out: ab, local: a, remote: b, closedc: make(chan struct{}), readDeadline: newDeadline(), writeDeadline: newDeadline()},
		&PipeConn{in: ab, out: ba, local: b, remote: a, closedc: make(chan struct{}), readDeadline: newDeadline(), writeDeadline: newDeadline()}
}

// stream is one direction of a Pipe.
type stream struct {
	writeMu  sync.Mutex // one Write at a time, so that writes do not interleave
	mu       sync.Mutex
	buf      []byte
	eof      bool          // the writer shut down its writing
	gone     bool          // the reader closed its end
	readable chan struct{} // a token while a reader may have news
	writable chan struct{} // a token while a writer may have room
}

func newStream() *stream {
	return &stream{readable: make(chan struct{}, 1), writable: make(chan struct{}, 1)}
}

func wake(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// PipeConn is one end of a Pipe. Any goroutine may call its methods at
// once, as net.Conn allows.
type PipeConn struct {
	in, out       *stream
	local, remote net.Addr

	closeOnce                   sync.Once
	closedc                     chan struct{}
	readDeadline, writeDeadline *deadline
}

// Read is what the other end wrote, as soon as there is some. As a
// socket's, it fails at once on a closed end or a passed deadline, even
// with data waiting.
func (c *PipeConn) Read(b []byte) (int, error) {
	for {
		switch {
		case isClosed(c.closedc):
			return 0, c.opError("read", net.ErrClosed)
		case isClosed(c.readDeadline.wait()):
			return 0, c.opError("read", os.ErrDeadlineExceeded)
		case len(b) == 0:
			return 0, nil
		}
		s := c.in
		s.mu.Lock()
		switch {
		case len(s.buf) > 0:
			n := copy(b, s.buf)
			s.buf = s.buf[n:]
			wake(s.writable)
			if len(s.buf) > 0 {
				wake(s.readable) // for another reader
			}
			s.mu.Unlock()
			return n, nil
		case s.eof:
			wake(s.readable) // every reader sees the EOF
			s.mu.Unlock()
			return 0, io.EOF
		}
		s.mu.Unlock()
		select {
		case <-s.readable:
		case <-c.readDeadline.wait():
			return 0, c.opError("read", os.ErrDeadlineExceeded)
		case <-c.closedc:
		}
	}
}

// Write buffers b, waiting while the buffer is full; concurrent Writes
// do not interleave.
func (c *PipeConn) Write(b []byte) (int, error) {
	s := c.out
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	n := 0
	for {
		switch {
		case isClosed(c.closedc):
			return n, c.opError("write", net.ErrClosed)
		case isClosed(c.writeDeadline.wait()):
			return n, c.opError("write", os.ErrDeadlineExceeded)
		}
		s.mu.Lock()
		if s.gone || s.eof { // the reader is gone, or we sent our FIN
			s.mu.Unlock()
			return n, c.opError("write", os.NewSyscallError("write", syscall.EPIPE))
		}
		if room := socketBuffer - len(s.buf); room > 0 {
			chunk := b[:min(len(b), room)]
			s.buf = append(s.buf, chunk...)
			n += len(chunk)
			b = b[len(chunk):]
			wake(s.readable)
		}
		s.mu.Unlock()
		if len(b) == 0 {
			return n, nil
		}
		select {
		case <-s.writable:
		case <-c.writeDeadline.wait():
			return n, c.opError("write", os.ErrDeadlineExceeded)
		case <-c.closedc:
		}
	}
}

// CloseWrite shuts down the writing half: the other end reads EOF once
// it has read what was written.
func (c *PipeConn) CloseWrite() error {
	s := c.out
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eof = true
	wake(s.readable)
	return nil
}

// Close ends this end: its reads and writes fail with "use of closed
// network connection", the other end reads EOF, and its writes fail.
func (c *PipeConn) Close() error {
	closed := false
	c.closeOnce.Do(func() {
		closed = true
		close(c.closedc)
		c.CloseWrite()
		s := c.in
		s.mu.Lock()
		s.gone, s.buf = true, nil
		wake(s.writable)
		s.mu.Unlock()
	})
	if !closed {
		return c.opError("close", net.ErrClosed)
	}
	return nil
}

func (c *PipeConn) LocalAddr() net.Addr  { return c.local }
func (c *PipeConn) RemoteAddr() net.Addr { return c.remote }

func (c *PipeConn) SetDeadline(t time.Time) error {
	c.readDeadline.set(t)
	c.writeDeadline.set(t)
	return nil
}

func (c *PipeConn) SetReadDeadline(t time.Time) error  { c.readDeadline.set(t); return nil }
func (c *PipeConn) SetWriteDeadline(t time.Time) error { c.writeDeadline.set(t); return nil }

// String names the connection in logs: "10.244.0.1:32769->10.244.0.5:80".
func (c *PipeConn) String() string { return fmt.Sprintf("%s->%s", c.local, c.remote) }

// opError words err as a TCP socket's.
func (c *PipeConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.local, Addr: c.remote, Err: err}
}
