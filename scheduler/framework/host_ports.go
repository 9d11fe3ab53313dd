package framework

import (
	corev1 "k8s.io/api/core/v1"
)

// DefaultBindAllHostIP is the host IP a hostPort binds when the pod names
// none: every address of the node.
const DefaultBindAllHostIP = "0.0.0.0"

// ProtocolPort is a protocol and a port: {TCP, 80}.
type ProtocolPort struct {
	Protocol string
	Port     int32
}

// HostPortInfo is the host ports taken on one node: host IP → the
// protocol/port pairs bound there. It is how the NodePorts filter (seed:
// PodFitsHostPorts) checks a pod's hostPorts against a node in constant
// time rather than by walking the node's pods.
type HostPortInfo map[string]map[ProtocolPort]struct{}

// Add records that ip/protocol/port is taken. An empty ip means 0.0.0.0
// and an empty protocol TCP, as in the pod spec.
func (h HostPortInfo) Add(ip, protocol string, port int32) {
	if port <= 0 {
		return
	}
	ip, protocol = sanitize(ip, protocol)
	if h[ip] == nil {
		h[ip] = map[ProtocolPort]struct{}{}
	}
	h[ip][ProtocolPort{protocol, port}] = struct{}{}
}

// Remove frees ip/protocol/port.
func (h HostPortInfo) Remove(ip, protocol string, port int32) {
	if port <= 0 {
		return
	}
	ip, protocol = sanitize(ip, protocol)
	if m := h[ip]; m != nil {
		delete(m, ProtocolPort{protocol, port})
		if len(m) == 0 {
			delete(h, ip)
		}
	}
}

// CheckConflict reports whether binding ip/protocol/port would clash with
// a port already taken (Kubernetes' HostPortInfo.CheckConflict):
//
//	wanted 0.0.0.0:80/TCP   clashes with 80/TCP on any IP of the node
//	wanted 10.0.0.1:80/TCP  clashes with 80/TCP on 10.0.0.1 or on 0.0.0.0
//	80/TCP and 80/UDP never clash.
func (h HostPortInfo) CheckConflict(ip, protocol string, port int32) bool {
	if port <= 0 {
		return false
	}
	ip, protocol = sanitize(ip, protocol)
	pp := ProtocolPort{protocol, port}
	if ip == DefaultBindAllHostIP {
		for _, m := range h {
			if _, ok := m[pp]; ok {
				return true
			}
		}
		return false
	}
	for _, key := range [2]string{DefaultBindAllHostIP, ip} {
		if _, ok := h[key][pp]; ok {
			return true
		}
	}
	return false
}

// Clone returns an independent copy.
func (h HostPortInfo) Clone() HostPortInfo {
	if h == nil {
		return nil
	}
	out := make(HostPortInfo, len(h))
	for ip, m := range h {
		c := make(map[ProtocolPort]struct{}, len(m))
		for pp := range m {
			c[pp] = struct{}{}
		}
		out[ip] = c
	}
	return out
}

func sanitize(ip, protocol string) (string, string) {
	if ip == "" {
		ip = DefaultBindAllHostIP
	}
	if protocol == "" {
		protocol = string(corev1.ProtocolTCP)
	}
	return ip, protocol
}

// HostPorts lists the ports with a hostPort of the pod's containers and of
// its sidecars (init containers with restartPolicy Always, which run the
// whole life of the pod). Ordinary init containers have exited before the
// app containers start, so their ports are not held.
func HostPorts(pod *corev1.Pod) []corev1.ContainerPort {
	var ports []corev1.ContainerPort
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			continue
		}
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				ports = append(ports, p)
			}
		}
	}
	for i := range pod.Spec.Containers {
		for _, p := range pod.Spec.Containers[i].Ports {
			if p.HostPort > 0 {
				ports = append(ports, p)
			}
		}
	}
	return ports
}
