package podnet

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// Both ends of a Pipe may write at once, as both ends of a TCP
// connection may while their socket buffers have room: neither waits for
// the other to read (net.Pipe's ends would wait for each other forever).
func TestPipeEndsWriteAtOnce(t *testing.T) {
	a, b := Pipe(&net.TCPAddr{Port: 1}, &net.TCPAddr{Port: 2})
	msg := bytes.Repeat([]byte("x"), 64<<10)
	for _, c := range []*PipeConn{a, b} {
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []*PipeConn{a, b} {
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("read %d bytes: %v", len(got), err)
		}
	}
	// A writer past the buffer waits for the reader, and gets all through.
	big := bytes.Repeat([]byte("y"), 3*socketBuffer)
	go func() { a.Write(big); a.CloseWrite() }()
	got, err := io.ReadAll(b)
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("read %d of %d bytes: %v", len(got), len(big), err)
	}
	// The other way is still open after a's FIN.
	if _, err := b.Write([]byte("reply")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if n, err := a.Read(buf); err != nil || string(buf[:n]) != "reply" {
		t.Fatalf("the answer after the FIN: %q, %v", buf[:n], err)
	}
}

// Closing an end fails its own reads and writes as a closed socket's,
// gives the other end EOF and EPIPE; a passed deadline is an i/o timeout.
func TestPipeCloseAndDeadlines(t *testing.T) {
	a, b := Pipe(&net.TCPAddr{Port: 1}, &net.TCPAddr{Port: 2})
	b.SetReadDeadline(time.Unix(1, 0))
	if _, err := b.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
	b.SetReadDeadline(time.Time{})
	a.Close()
	if _, err := a.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("read of a closed end: %v", err)
	}
	if _, err := b.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("the other end's read: %v, want EOF", err)
	}
	if _, err := b.Write([]byte("x")); !errors.Is(err, syscall.EPIPE) {
		t.Errorf("the other end's write: %v, want EPIPE", err)
	}
	if err := a.Close(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
}
