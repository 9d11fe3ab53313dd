package podnet

import (
	"cmp"
	"strings"
)

// NetworkOf is the Go network name of a Kubernetes or CRI protocol
// ("TCP", "UDP", "SCTP"; "" is TCP): "tcp", "udp", "sctp".
func NetworkOf(protocol string) string {
	return strings.ToLower(cmp.Or(protocol, "TCP"))
}
