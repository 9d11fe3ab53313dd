package lib

import (
	"io"
	"log"
	"net"
	"net/http"
	"sync"

	"github.com/mkube/mkube/images/shell"
)

// ServeHTTP answers the HTTP/1.1 requests that arrive on conn with h
// until either side closes it: net/http's own server (keep-alive,
// pipelining, Connection: close, HEAD), on a listener that hands it this
// one connection and then waits until the connection is closed.
func ServeHTTP(conn net.Conn, h http.Handler) {
	srv := &http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)}
	srv.Serve(SingleConnListener(conn)) // returns once the connection is closed
}

// SingleConnListener is a listener of conn alone, for a server of one
// connection (http.Server's, grpc.Server's): its Serve returns once conn
// is closed.
func SingleConnListener(conn net.Conn) net.Listener {
	return &connListener{conn: conn, closedc: make(chan struct{})}
}

// connListener is a net.Listener of one connection. Accept returns it
// first, then blocks until it is closed (closedc, closed by the
// connection's Close), so that http.Server.Serve returns when the
// connection is done and not before.
type connListener struct {
	conn     net.Conn
	accepted bool // only Serve's goroutine calls Accept
	closedc  chan struct{}
	once     sync.Once
}

func (l *connListener) Accept() (net.Conn, error) {
	if !l.accepted {
		l.accepted = true
		return &notifyingConn{Conn: l.conn, l: l}, nil
	}
	<-l.closedc
	return nil, net.ErrClosed
}

func (l *connListener) Close() error { return nil }

func (l *connListener) Addr() net.Addr { return l.conn.LocalAddr() }

// notifyingConn tells its listener when it is closed.
type notifyingConn struct {
	net.Conn
	l *connListener
}

func (c *notifyingConn) Close() error {
	err := c.Conn.Close()
	c.l.once.Do(func() { close(c.l.closedc) })
	return err
}

// response records what a handler answered, for an access log line.
type response struct {
	http.ResponseWriter
	status int
	bytes  int64 // body bytes sent
}

func (w *response) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *response) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Logged serves h with the Date header from the container's clock (so a
// test's fake clock shows in it, as in the access log) and server as the
// Server header, then writes the access log line line makes of the
// exchange, if any, to the container's stdout, where `kubectl logs`
// shows it.
func Logged(p *shell.Process, server string, h http.Handler, line func(r *http.Request, status int, bytes int64) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := p.Clock.Now()
		w.Header().Set("Date", now.UTC().Format(http.TimeFormat))
		if server != "" {
			w.Header().Set("Server", server)
		}
		rw := &response{ResponseWriter: w}
		h.ServeHTTP(rw, r)
		if rw.status == 0 {
			rw.status = http.StatusOK
		}
		if line != nil {
			io.WriteString(p.Stdout, line(r, rw.status, rw.bytes)+"\n")
		}
	})
}
