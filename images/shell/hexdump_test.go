package shell

import (
	"context"
	"strings"
	"testing"
)

// hexdump -C prints as busybox's (and util-linux's) does: these are the
// real one's outputs.
func TestHexdumpCanonical(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"\xde\xca\xfe\xba\xd0\xfe\xff", "00000000  de ca fe ba d0 fe ff                              |.......|\n00000007\n"},
		{"0123456789abcdef", "00000000  30 31 32 33 34 35 36 37  38 39 61 62 63 64 65 66  |0123456789abcdef|\n00000010\n"},
		{"a\x7f\x80~ \tb", "00000000  61 7f 80 7e 20 09 62                              |a..~ .b|\n00000007\n"},
		{strings.Repeat("0123456789abcdef", 3) + "XYZ", "00000000  30 31 32 33 34 35 36 37  38 39 61 62 63 64 65 66  |0123456789abcdef|\n*\n" +
			"00000030  58 59 5a                                          |XYZ|\n00000033\n"},
	} {
		if got := canonicalHex([]byte(tc.in)); got != tc.want {
			t.Errorf("hexdump -C of %q:\n%s\nwant:\n%s", tc.in, got, tc.want)
		}
	}
	fsys := NewFS()
	fsys.WriteFile("/etc/dump.bin", []byte("\xde\xca"))
	var out, errOut strings.Builder
	p := New(Options{FS: fsys, Stdout: &out, Stderr: &errOut})
	code, err := p.Exec(context.Background(), []string{"hexdump", "-C", "/etc/dump.bin", "/nope"})
	if code != 1 || err != nil || out.String() != "00000000  de ca                                             |..|\n00000002\n" ||
		errOut.String() != "hexdump: /nope: No such file or directory\n" {
		t.Errorf("exit (%d, %v), stdout %q, stderr %q", code, err, out.String(), errOut.String())
	}
}
