package kubelet

import (
	"context"
	"net"
	"net/netip"

	"github.com/mkube/mkube/network/podnetwork/podnet"
)

// The kubelet reaches its pods' servers, for httpGet and tcpSocket
// probes, lifecycle hooks and port-forwarding, as a real kubelet does: by
// connecting to the pod's IP on the port. The pod IPs here are no host's
// addresses (no container really runs), so the connection goes through
// the runtime's PodNetwork service (network/podnetwork/podnet).

// dialPod connects to port on the pod IP ip, from the node.
func (rs *runtimeService) dialPod(ctx context.Context, ip string, port int) (net.Conn, error) {
	return podnet.Dial(ctx, rs.network, netip.Addr{}, ip, port)
}
