package lifecycle

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/kubelet/internal/kubelettest"
)

func TestTheNodeAllowsSafeSysctlsAndThoseItsAdminAllowed(t *testing.T) {
	sysctls := func(names ...string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{}
			for _, n := range names {
				p.Spec.SecurityContext.Sysctls = append(p.Spec.SecurityContext.Sysctls, corev1.Sysctl{Name: n, Value: "1"})
			}
		}
	}
	hostNetwork := func(p *corev1.Pod) { p.Spec.HostNetwork = true }
	hostIPC := func(p *corev1.Pod) { p.Spec.HostIPC = true }
	tests := []struct {
		name    string
		pod     *corev1.Pod
		unsafe  []string
		message string
	}{
		{"no sysctls", kubelettest.AdmissionPod("p"), nil, ""},
		{"a safe one", kubelettest.AdmissionPod("p", sysctls("kernel.shm_rmid_forced")), nil, ""},
		{"written with slashes", kubelettest.AdmissionPod("p", sysctls("net/ipv4/tcp_syncookies")), nil, ""},
		{"an unsafe one", kubelettest.AdmissionPod("p", sysctls("kernel.shm_rmid_forced", "kernel.msgmax")), nil, `forbidden sysctl: "kernel.msgmax" not allowlisted`},
		{"allowed by name", kubelettest.AdmissionPod("p", sysctls("kernel.msgmax")), []string{"kernel.msgmax"}, ""},
		{"allowed by pattern", kubelettest.AdmissionPod("p", sysctls("kernel.msgmax", "kernel.msgmnb")), []string{"kernel.msg*"}, ""},
		{"a pattern allows its prefix only", kubelettest.AdmissionPod("p", sysctls("kernel.sem")), []string{"kernel.msg*"}, `forbidden sysctl: "kernel.sem" not allowlisted`},
		{"a network one with hostNetwork", kubelettest.AdmissionPod("p", sysctls("net.ipv4.tcp_syncookies"), hostNetwork), nil,
			`forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host net enabled`},
		{"an IPC one with hostIPC", kubelettest.AdmissionPod("p", sysctls("kernel.msgmax"), hostIPC), []string{"kernel.msg*"},
			`forbidden sysctl: "kernel.msgmax" not allowed with host IPC enabled`},
		{"an IPC one with hostNetwork", kubelettest.AdmissionPod("p", sysctls("kernel.shm_rmid_forced"), hostNetwork), nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var message string
			if r := sysctlRejection(tc.pod, tc.unsafe); r != nil {
				if r.Reason != reasonSysctlForbidden {
					t.Errorf("reason %q", r.Reason)
				}
				message = r.Message
			}
			if message != tc.message {
				t.Errorf("got %q, want %q", message, tc.message)
			}
		})
	}
}

func TestOnlyNamespacedSysctlsMayBeAllowed(t *testing.T) {
	tests := []struct {
		flag string
		want []string
		err  string
	}{
		{"", nil, ""},
		{"kernel.msg*, net.core.somaxconn", []string{"kernel.msg*", "net.core.somaxconn"}, ""},
		{"fs/mqueue/msg_max", []string{"fs.mqueue.msg_max"}, ""},
		{"kernel.hostname", nil, `--allowed-unsafe-sysctls: the sysctl pattern "kernel.hostname" is not known to be namespaced`},
		{"vm.*", nil, `--allowed-unsafe-sysctls: the sysctl pattern "vm.*" is not known to be namespaced`},
	}
	for _, tc := range tests {
		got, err := ParseAllowedUnsafeSysctls(tc.flag)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if msg != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q %v, want %q %v", tc.flag, got, err, tc.want, tc.err)
		}
	}
}
