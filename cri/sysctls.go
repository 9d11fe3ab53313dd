package cri

import (
	"path"
	"strings"
)

// A container's kernel parameters: /proc/sys of its filesystem holds
// the namespaced sysctls a pod may set, with the kernel's defaults, and
// the values its sandbox's config sets (the pod's
// securityContext.sysctls, which the kubelet passes in
// LinuxPodSandboxConfig.sysctls), as the runtime applies them in the
// pod's namespaces before its containers start (process.go's
// sandboxFiles). `sysctl kernel.shm_rmid_forced` reads them there
// (images/shell's kernel.go).

// defaultSysctls are Linux's defaults of the sysctls Kubernetes deems
// safe (they are per network or IPC namespace, so a pod's value touches
// no other pod), which the kubelet allows without --allowed-unsafe-sysctls.
var defaultSysctls = map[string]string{
	"kernel.shm_rmid_forced":              "0",
	"net.ipv4.ip_local_port_range":        "32768\t60999",
	"net.ipv4.ip_local_reserved_ports":    "",
	"net.ipv4.tcp_syncookies":             "1",
	"net.ipv4.ping_group_range":           "1\t0",
	"net.ipv4.ip_unprivileged_port_start": "1024",
	"net.ipv4.tcp_keepalive_time":         "7200",
	"net.ipv4.tcp_fin_timeout":            "60",
	"net.ipv4.tcp_keepalive_intvl":        "75",
	"net.ipv4.tcp_keepalive_probes":       "9",
}

// sysctlFiles are sb's sysctls as the files of /proc/sys.
func sysctlFiles(sb *sandbox) map[string]string {
	values := map[string]string{}
	for k, v := range defaultSysctls {
		values[k] = v
	}
	for k, v := range sb.config.GetLinux().GetSysctls() {
		values[strings.ReplaceAll(k, "/", ".")] = v // "kernel/shm_rmid_forced" is the same key
	}
	files := make(map[string]string, len(values))
	for k, v := range values {
		files[path.Join("/proc/sys", strings.ReplaceAll(k, ".", "/"))] = v + "\n"
	}
	return files
}
