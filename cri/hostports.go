package cri

import (
	"net/netip"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/network/podnetwork/podnet"
)

// Host ports. A container port with a hostPort is reachable at the
// node's address: the CNI portmap plugin, which containerd calls with
// the sandbox's port mappings, DNATs HOST-IP:HOST-PORT to the pod's
// IP and container port (a hostIP of "" or 0.0.0.0 is every address of
// the node, 127.0.0.1 included). Here the node's addresses are its
// loopback, for its host-network processes, and the addresses its
// kubelet names as its own (SetServices' local_node_ips).

// isNodeAddress reports whether a connection from src (zero: the
// node's network) to ip is to this node itself.
func (s *Server) isNodeAddress(src, ip netip.Addr) bool {
	return (ip.IsLoopback() && !src.IsValid()) || s.services.IsLocalNodeIP(ip)
}

// hostPort is where a connection from src to dst over network ("tcp",
// "udp") goes if a pod of this node maps dst's port on dst's address
// for that protocol.
func (s *Server) hostPort(src netip.Addr, network string, dst netip.AddrPort) (netip.AddrPort, bool) {
	if !s.isNodeAddress(src, dst.Addr()) {
		return netip.AddrPort{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for ip, sb := range s.sandboxesByIP {
		if sb.state != runtimeapi.PodSandboxState_SANDBOX_READY {
			continue
		}
		for _, pm := range sb.config.GetPortMappings() {
			if pm.GetHostPort() != int32(dst.Port()) || podnet.NetworkOf(pm.GetProtocol().String()) != network {
				continue
			}
			switch pm.GetHostIp() {
			case "", "0.0.0.0", dst.Addr().String():
				return netip.AddrPortFrom(ip, uint16(pm.GetContainerPort())), true
			}
		}
	}
	return netip.AddrPort{}, false
}
