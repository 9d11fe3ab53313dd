package shell

import "testing"

func TestMvAndDdAsTheStatefulSetSpecsUseThem(t *testing.T) {
	tests := []struct {
		name, script   string
		stdout, stderr string
		code           int
	}{
		{"mv -v into a directory breaks an HTTP probe's file", `echo cert > /localhost.crt; mv -v /localhost.crt /tmp/; test -f /localhost.crt || cat /tmp/localhost.crt`,
			"'/localhost.crt' -> '/tmp/localhost.crt'\ncert\n", "", 0},
		{"and back again", `echo cert > /tmp/localhost.crt; mv -v /tmp/localhost.crt / && cat /localhost.crt`,
			"'/tmp/localhost.crt' -> '/localhost.crt'\ncert\n", "", 0},
		{"mv renames a file", `echo x > /tmp/a; mv /tmp/a /tmp/b; cat /tmp/b; test -e /tmp/a || echo gone`, "x\ngone\n", "", 0},
		{"mv of what is not there, idempotent with || true", `mv -v /nope /tmp/ || true`, "",
			"mv: can't rename '/nope': No such file or directory\n", 0},
		{"dd from /dev/zero writes count blocks", `dd if=/dev/zero of=/tmp/continue bs=1 count=1 conv=fsync && test -f /tmp/continue && wc -c /tmp/continue`,
			"1 /tmp/continue\n", "1+0 records in\n1+0 records out\n", 0},
		{"sh -x -c runs its script, as the e2e framework's exec does", `sh -x -c 'echo traced'; sh -ec 'echo errexit'`, "traced\nerrexit\n", "", 0},
		{"dd copies stdin to a file", `echo web-1 | dd of=/tmp/hostname conv=fsync; cat /tmp/hostname`,
			"web-1\n", "0+1 records in\n0+1 records out\n", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code, _ := run(t, tc.script)
			if out != tc.stdout || errOut != tc.stderr || code != tc.code {
				t.Errorf("%s:\nstdout %q, want %q\nstderr %q, want %q\nexit %d, want %d", tc.script, out, tc.stdout, errOut, tc.stderr, code, tc.code)
			}
		})
	}
}
