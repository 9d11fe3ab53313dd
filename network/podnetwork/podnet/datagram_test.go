package podnet

import (
	"errors"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// A DatagramConn reads the datagrams it was given one at a time, cut to
// the reader's buffer; an ICMP port unreachable fails one read with
// ECONNREFUSED; a passed deadline and Close end reads as a socket's do.
func TestDatagramConnReadsAsAConnectedUDPSocket(t *testing.T) {
	var sent [][]byte
	local, remote := &net.UDPAddr{IP: net.IPv4(10, 244, 1, 2), Port: 40000}, &net.UDPAddr{IP: net.IPv4(10, 244, 1, 5), Port: 8081}
	c := NewDatagramConn(local, remote, func(b []byte) error { sent = append(sent, b); return nil }, nil)

	if n, err := c.Write([]byte("hostname")); n != 8 || err != nil || len(sent) != 1 || string(sent[0]) != "hostname" {
		t.Fatalf("Write = %d, %v; sent %q", n, err, sent)
	}
	c.Receive([]byte("pod-a"))
	c.Receive([]byte("a longer answer"))
	c.Unreachable()
	buf := make([]byte, 8)
	for _, want := range []string{"pod-a", "a longer"} {
		if n, err := c.Read(buf); err != nil || string(buf[:n]) != want {
			t.Fatalf("Read = %q, %v; want %q", buf[:n], err, want)
		}
	}
	_, err := c.Read(buf)
	if !errors.Is(err, syscall.ECONNREFUSED) || err.Error() != "read udp 10.244.1.2:40000->10.244.1.5:8081: read: connection refused" {
		t.Fatalf("Read after the port unreachable = %v", err)
	}
	c.SetReadDeadline(time.Unix(1, 0))
	if _, err := c.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read past its deadline = %v, want i/o timeout", err)
	}
	c.SetReadDeadline(time.Time{})
	go c.Close()
	if _, err := c.Read(buf); !errors.Is(err, net.ErrClosed) { // a Read waiting when Close comes
		t.Fatalf("Read of a closed socket = %v", err)
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Write to a closed socket = %v", err)
	}
}

// A full queue drops what more comes, as a full receive buffer does.
func TestDatagramConnDropsWhatItCannotHold(t *testing.T) {
	c := NewDatagramConn(&net.UDPAddr{}, &net.UDPAddr{}, func([]byte) error { return nil }, nil)
	for range datagramQueue + 10 {
		c.Receive([]byte("x"))
	}
	c.mu.Lock()
	n := len(c.queue)
	c.mu.Unlock()
	if n != datagramQueue {
		t.Fatalf("%d datagrams queued, want the queue's %d", n, datagramQueue)
	}
	// A passed deadline fails a read at once, with datagrams waiting, as a
	// socket's does.
	c.SetReadDeadline(time.Unix(1, 0))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline = %v", err)
	}
}
