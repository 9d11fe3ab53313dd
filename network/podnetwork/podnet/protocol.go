package podnet

import (
	"cmp"
	"net"
	"strings"
)

// NetworkOf is the Go network name of a Kubernetes or CRI protocol
// ("TCP", "UDP", "SCTP"; "" is TCP): "tcp", "udp", "sctp".
func NetworkOf(protocol string) string {
	return strings.ToLower(cmp.Or(protocol, "TCP"))
}

// CloseWriter is a connection that can shut down its writing half, as
// *net.TCPConn and the pod network's connections can (TCP's FIN).
type CloseWriter interface {
	net.Conn
	CloseWrite() error
}
