package catalog

import (
	"bufio"
	"net"

	"github.com/mkube/mkube/images/lib"
	"google.golang.org/grpc"
)

// serveGRPC answers the gRPC calls that arrive on conn with the services
// register adds, until either side closes it: grpc-go's own server
// (HTTP/2, its flow control, its status codes), on the listener of one
// connection that lib.ServeHTTP uses too. Each connection has a server of
// its own, as each has an http.Server, so that an idle container holds
// none (serve.go).
//
// How it stops: when the client hangs up, or the runtime closes conn
// because the container exited, the server's transport fails its next
// read and closes conn; the listener's Accept then returns
// net.ErrClosed, Serve returns, and Stop ends what of the server is
// left (its transport's goroutines, a call in flight). Nothing outlives
// the connection.
func serveGRPC(conn net.Conn, register func(*grpc.Server)) {
	srv := grpc.NewServer()
	register(srv)
	srv.Serve(lib.SingleConnListener(conn)) // returns once conn is closed
	srv.Stop()
}

// http2Preface is how an HTTP/2 client, gRPC's, opens a connection
// (RFC 9113 §3.4): "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n". Its first bytes
// tell it from an HTTP/1.1 request line.
const http2Preface = "PRI * HTTP/2.0"

// isHTTP2 reads the first bytes the client sends on conn and reports
// whether they open HTTP/2, for a server that, as etcd's does, speaks
// gRPC and HTTP/1.1 on one port; the connection it returns reads those
// bytes again. ok is false if the client hung up first (a tcpSocket
// probe only connects).
func isHTTP2(conn net.Conn) (c net.Conn, http2, ok bool) {
	r := bufio.NewReader(conn)
	head, err := r.Peek(3)
	if err != nil {
		return conn, false, false
	}
	return &peekedConn{Conn: conn, r: r}, string(head) == http2Preface[:3], true
}

// peekedConn reads what was peeked at before the rest of the connection.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(b []byte) (int, error) { return c.r.Read(b) }
