package shell

import (
	"context"
	"strings"
	"testing"
)

func TestID(t *testing.T) {
	const passwd = "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n"
	const group = "root:x:0:\nwheel:x:10:root\nnogroup:x:65534:\n"
	tests := []struct {
		name   string
		who    Identity
		script string
		want   string
	}{
		{"root, by number and name, with its groups", Identity{Groups: []uint32{0, 10}}, "id",
			"uid=0(root) gid=0(root) groups=0(root),10(wheel)\n"},
		{"a user the image does not name is only numbers", Identity{UID: 1001, GID: 2002, Groups: []uint32{2002}}, "id",
			"uid=1001 gid=2002 groups=2002\n"},
		{"-u, -g and -G", Identity{UID: 65534, GID: 65534, Groups: []uint32{65534, 1234}}, "id -u; id -g; id -G",
			"65534\n65534\n65534 1234\n"},
		{"-n names them", Identity{UID: 65534, GID: 65534, Groups: []uint32{65534}}, "id -un; id -gn",
			"nobody\nnogroup\n"},
		{"test $(id -u), as Kubernetes' runAsUser test runs it", Identity{UID: 65534}, "test $(id -u) -eq 65534 && echo yes",
			"yes\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := NewFS()
			fsys.WriteFile("/etc/passwd", []byte(passwd))
			fsys.WriteFile("/etc/group", []byte(group))
			var out strings.Builder
			p := New(Options{FS: fsys, Stdout: &out, Stderr: &out, Identity: tt.who})
			if _, err := p.Script(context.Background(), tt.script); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("got %q, want %q", out.String(), tt.want)
			}
		})
	}
}
