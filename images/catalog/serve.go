package catalog

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mkube/mkube/images/shell"
)

// What the images' servers answer. A program that serves calls
// p.Listen(port) (see serve in base.go); when a client connects to the
// pod's IP on that port (the kubelet's httpGet or tcpSocket probe, a
// port-forward), the runtime finds the container and calls its image's
// Serve with the connection. Nothing runs between connections, so a node
// of 150,000 idle nginx containers costs no goroutine for them.

// Server answers one TCP connection to port, a port the container's
// process listens on. The runtime calls it in a goroutine of the
// connection's own and closes conn when the container exits; it returns
// once it is done with conn, having closed it. It reads the container's
// files when a request comes, not before, so that it serves what
// `kubectl exec` or a mounted volume changed since.
type Server func(c Running, port int32, conn net.Conn)

// DatagramServer answers one UDP datagram sent from from to port, a port
// the container's process has bound: what it returns are the datagrams
// its server sends back to from (none, for one it ignores). The runtime
// calls it as the datagram is sent, in the sender's goroutine.
type DatagramServer func(c Running, port int32, from net.Addr, datagram []byte) [][]byte

// Running is what a server knows of the container it runs in.
type Running struct {
	Process *shell.Process // its files, clock, output streams and hostname
	Argv    []string       // its command line, as its ENTRYPOINT and CMD made it
	Env     []string       // its environment, NAME=value
	Started time.Time      // when it started, on Process.Clock
}

// serveHTTP answers the HTTP/1.1 requests that arrive on conn with h
// until either side closes it: net/http's own server (keep-alive,
// pipelining, Connection: close, HEAD), on a listener that hands it this
// one connection and then waits until the connection is closed.
func serveHTTP(conn net.Conn, h http.Handler) {
	l := &connListener{conn: conn, closedc: make(chan struct{})}
	srv := &http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)}
	srv.Serve(l) // returns once the connection is closed
}

// acceptTLS is the server's side of a TLS handshake on conn with cert,
// asking for a client certificate without requiring one: the connection
// and the certificates the client presented. A failed handshake closes
// conn (ok false).
func acceptTLS(conn net.Conn, cert tls.Certificate) (_ net.Conn, peers []*x509.Certificate, ok bool) {
	tlsConn := tls.Server(conn, &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequestClientCert})
	if err := tlsConn.Handshake(); err != nil {
		conn.Close()
		return nil, nil, false
	}
	return tlsConn, tlsConn.ConnectionState().PeerCertificates, true
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

func (l *connListener) Close() error   { return nil }
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

// logged serves h with the Date header from the container's clock (so a
// test's fake clock shows in it, as in the access log) and server as the
// Server header, then writes the access log line line makes of the
// exchange, if any, to the container's stdout, where `kubectl logs`
// shows it.
func logged(c Running, server string, h http.Handler, line func(r *http.Request, status int, bytes int64) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := c.Process.Clock.Now()
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
			io.WriteString(c.Process.Stdout, line(r, rw.status, rw.bytes)+"\n")
		}
	})
}

// clientIP is the address the request came from, as a server logs it.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// requestLine is the request's first line, as access logs quote it.
func requestLine(r *http.Request) string { return r.Method + " " + r.RequestURI + " " + r.Proto }

// orDash is an access log's field: "-" for nothing.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// timeLocal is nginx's $time_local and Apache's %t, in the container's
// time zone (UTC): "01/Dec/2026:14:00:00 +0000".
const timeLocal = "02/Jan/2006:15:04:05 -0700"

// holdTCP is a server that accepts connections and reads what comes
// until the client closes, answering nothing: enough for a tcpSocket
// probe, which only connects. (postgres does wait for the client's
// startup message; a real mysqld would send its greeting first, which
// is left out.)
func holdTCP(_ Running, _ int32, conn net.Conn) {
	defer conn.Close()
	io.Copy(io.Discard, conn)
}
