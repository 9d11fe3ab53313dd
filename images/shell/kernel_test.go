package shell

import (
	"context"
	"strings"
	"testing"
)

func TestSysctlAndIPLink(t *testing.T) {
	tests := []struct {
		name       string
		privileged bool
		script     string
		want       string
	}{
		{"sysctl reads /proc/sys", false, "sysctl kernel.shm_rmid_forced; sysctl -n kernel.shm_rmid_forced",
			"kernel.shm_rmid_forced = 1\n1\n"},
		{"an unknown key", false, "sysctl kernel.nope; echo $?", "sysctl: error: 'kernel.nope' is an unknown key\n1\n"},
		{"ip link add is EPERM without privileges", false, "ip link add dummy0 type dummy || true",
			"ip: RTNETLINK answers: Operation not permitted\n"},
		{"a privileged container may", true, "ip link add dummy0 type dummy && echo added", "added\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := NewFS()
			fsys.WriteFile("/proc/sys/kernel/shm_rmid_forced", []byte("1\n"))
			var out strings.Builder
			p := New(Options{FS: fsys, Stdout: &out, Stderr: &out, Privileged: tt.privileged})
			if _, err := p.Script(context.Background(), tt.script); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("got %q, want %q", out.String(), tt.want)
			}
		})
	}
}
