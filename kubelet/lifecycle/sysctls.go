package lifecycle

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The sysctls a pod may set (securityContext.sysctls). The API server
// checks only their names; which ones a node lets pods set is the
// kubelet's to judge, at admission, before the pod's sandbox is made:
//
//	the safe set below                  always (each is per network or IPC namespace: it touches no other pod)
//	--allowed-unsafe-sysctls patterns   if the node's admin allowed them: "kernel.msg*", "net.core.somaxconn"
//	anything else                       rejected, reason SysctlForbidden:
//	                                    forbidden sysctl: "kernel.msgmax" not allowlisted
//
// A network sysctl is refused with hostNetwork, an IPC one with hostIPC:
// the pod would set the node's own. Kubernetes: pkg/kubelet/sysctl.

// safeSysctls are Kubernetes' SafeSysctlAllowlist, by the namespace each
// belongs to.
var safeSysctls = map[string]string{
	"kernel.shm_rmid_forced":              "IPC",
	"net.ipv4.ip_local_port_range":        "net",
	"net.ipv4.tcp_syncookies":             "net",
	"net.ipv4.ping_group_range":           "net",
	"net.ipv4.ip_unprivileged_port_start": "net",
	"net.ipv4.ip_local_reserved_ports":    "net",
	"net.ipv4.tcp_keepalive_time":         "net",
	"net.ipv4.tcp_fin_timeout":            "net",
	"net.ipv4.tcp_keepalive_intvl":        "net",
	"net.ipv4.tcp_keepalive_probes":       "net",
	"net.ipv4.tcp_rmem":                   "net",
	"net.ipv4.tcp_wmem":                   "net",
}

// reasonSysctlForbidden is the rejected pod's reason.
const reasonSysctlForbidden = "SysctlForbidden"

// sysctlRejection says why the node refuses one of the pod's sysctls,
// nil if it allows them all. allowedUnsafe are --allowed-unsafe-sysctls:
// names, or prefixes ending in "*".
func sysctlRejection(pod *corev1.Pod, allowedUnsafe []string) *Rejection {
	sc := pod.Spec.SecurityContext
	if sc == nil {
		return nil
	}
	for _, s := range sc.Sysctls {
		if err := checkSysctl(s.Name, pod.Spec.HostNetwork, pod.Spec.HostIPC, allowedUnsafe); err != "" {
			return &Rejection{reasonSysctlForbidden, "forbidden sysctl: " + err}
		}
	}
	return nil
}

func checkSysctl(name string, hostNetwork, hostIPC bool, allowedUnsafe []string) string {
	name = strings.ReplaceAll(name, "/", ".") // "kernel/shm_rmid_forced" is the same sysctl
	ns, allowed := safeSysctls[name]
	for _, p := range allowedUnsafe {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(name, prefix) || p == name {
			ns, allowed = sysctlNamespace(name), true
		}
	}
	switch {
	case !allowed:
		return fmt.Sprintf("%q not allowlisted", name)
	case ns == "net" && hostNetwork, ns == "IPC" && hostIPC:
		return fmt.Sprintf("%q not allowed with host %s enabled", name, ns)
	}
	return ""
}

// sysctlNamespace is the kernel namespace a sysctl belongs to: net,
// IPC, or "" for one that is not namespaced (the node's own).
func sysctlNamespace(name string) string {
	switch {
	case strings.HasPrefix(name, "net."):
		return "net"
	case strings.HasPrefix(name, "kernel.shm"), strings.HasPrefix(name, "kernel.msg"), strings.HasPrefix(name, "kernel.sem"),
		strings.HasPrefix(name, "fs.mqueue."):
		return "IPC"
	}
	return ""
}

// ParseAllowedUnsafeSysctls reads --allowed-unsafe-sysctls: names or
// "prefix*" patterns, comma-separated. As the kubelet, it refuses one
// that is not namespaced: a pod setting it would set the node's own.
func ParseAllowedUnsafeSysctls(s string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		name := strings.ReplaceAll(p, "/", ".")
		if sysctlNamespace(strings.TrimSuffix(name, "*")) == "" {
			return nil, fmt.Errorf("--allowed-unsafe-sysctls: the sysctl pattern %q is not known to be namespaced", p)
		}
		out = append(out, name)
	}
	return out, nil
}
