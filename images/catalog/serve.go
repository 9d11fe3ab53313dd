package catalog

import (
	"io"
	"net"
	"net/http"
	"time"

	"github.com/mkube/mkube/images/shell"
)

// What the images' servers answer. A program that serves calls
// p.Listen(port) (see lib.ListenUntilStopped); when a client connects to the
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
