package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestSysctlNames(t *testing.T) {
	spec := func(hostNetwork bool, names ...string) *corev1.PodSpec {
		s := &corev1.PodSpec{HostNetwork: hostNetwork, SecurityContext: &corev1.PodSecurityContext{}}
		for _, n := range names {
			s.SecurityContext.Sysctls = append(s.SecurityContext.Sysctls, corev1.Sysctl{Name: n, Value: "1"})
		}
		return s
	}
	tests := []struct {
		name string
		spec *corev1.PodSpec
		want string
	}{
		{"valid names, safe or not (the kubelet judges that)", spec(false, "kernel.shm_rmid_forced", "kernel.shmmax", "net/ipv4/ip_forward"), ""},
		{"a name ending in a dash or dots", spec(false, "foo-", "bar.."),
			`s[0].name: Invalid value: "foo-": must have at most 253 characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$` + "\n" +
				`s[1].name: Invalid value: "bar..": must have at most 253 characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`},
		{"twice", spec(false, "kernel.msgmax", "kernel.msgmax"), `s[1].name: Duplicate value: "kernel.msgmax"`},
		{"a network sysctl in the host's network", spec(true, "net.core.somaxconn"), `s[0].name: Invalid value: "net.core.somaxconn": may not be specified when 'hostNetwork' is true`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range validateSysctls(tc.spec, field.NewPath("s")) {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}
