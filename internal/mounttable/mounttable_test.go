package mounttable

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const cache = "/var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/cache"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []Mount
	}{
		{"a tmpfs line gives its mount point and its size in bytes",
			"tmpfs " + cache + " tmpfs rw,size=1048576 0 0\n",
			[]Mount{{Source: "tmpfs", Point: cache, Type: "tmpfs", Size: 1048576}}},
		{"a mount without size= has no limit",
			"tmpfs /run tmpfs rw,nosuid 0 0\n",
			[]Mount{{Source: "tmpfs", Point: "/run", Type: "tmpfs"}}},
		{"octal escapes in a mount point are read back as the characters",
			`tmpfs /a\040b tmpfs rw 0 0`,
			[]Mount{{Source: "tmpfs", Point: "/a b", Type: "tmpfs"}}},
		{"short lines and relative mount points are skipped",
			"garbage\ntmpfs relative tmpfs rw 0 0\n\n",
			nil},
		{"a size that is not a number is no size",
			"tmpfs /x tmpfs rw,size=1024k 0 0",
			[]Mount{{Source: "tmpfs", Point: "/x", Type: "tmpfs"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Parse([]byte(tc.in)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

func TestUnder(t *testing.T) {
	ms := []Mount{{Point: "/var"}, {Point: cache}}
	for _, tc := range []struct {
		name, path string
		point, rel string
		ok         bool
	}{
		{"the mount point itself is at the root of its mount", cache, cache, "", true},
		{"a subdirectory is in the deepest mount that holds it", cache + "/pod-a/f", cache, "pod-a/f", true},
		{"a sibling with the same prefix is not in the mount", cache + "x", "/var", strings.TrimPrefix(cache+"x", "/var/"), true},
		{"a path under no mount is in none", "/etc/hosts", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, rel, ok := Under(ms, tc.path)
			if ok != tc.ok || m.Point != tc.point || rel != tc.rel {
				t.Errorf("Under(%q) = %q, %q, %v; want %q, %q, %v", tc.path, m.Point, rel, ok, tc.point, tc.rel, tc.ok)
			}
		})
	}
}

func TestAddAndRemoveUnderKeepTheFileInStep(t *testing.T) {
	root := t.TempDir()
	if ms, err := Read(root); err != nil || ms != nil {
		t.Fatalf("a node without a table: %v, %v; want none", ms, err)
	}
	a := Mount{Source: "tmpfs", Point: cache, Type: "tmpfs", Size: 100}
	b := Mount{Source: "tmpfs", Point: "/var/lib/kubelet/pods/u2/volumes/kubernetes.io~empty-dir/m", Type: "tmpfs", Size: 200}
	for _, m := range []Mount{a, b, a} { // a again: no second line
		if err := Add(root, m); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(filepath.Join(root, "proc", "mounts"))
	if want := "tmpfs " + cache + " tmpfs rw,size=100 0 0\n"; !strings.Contains(string(data), want) || strings.Count(string(data), "\n") != 2 {
		t.Errorf("table:\n%s\nwant two lines, one of them %q", data, want)
	}
	if err := RemoveUnder(root, "/var/lib/kubelet/pods/u1"); err != nil {
		t.Fatal(err)
	}
	if ms, _ := Read(root); !reflect.DeepEqual(ms, []Mount{b}) {
		t.Errorf("after removing u1's mounts: %+v, want only %+v", ms, b)
	}
}

// FuzzParse: whatever the file holds, Parse never fails, and what it
// reads is written back and read again the same.
func FuzzParse(f *testing.F) {
	f.Add("tmpfs " + cache + " tmpfs rw,size=1048576 0 0\n")
	f.Add(`tmpfs /a\040b\134c tmpfs rw 0 0`)
	f.Fuzz(func(t *testing.T, in string) {
		ms := Parse([]byte(in))
		again := Parse(Format(ms))
		if len(ms) != len(again) {
			t.Fatalf("%q: read %d mounts, then %d after Format", in, len(ms), len(again))
		}
		for i := range ms {
			if ms[i].Point != again[i].Point || ms[i].Size != again[i].Size {
				t.Errorf("%q: %+v became %+v", in, ms[i], again[i])
			}
		}
	})
}
