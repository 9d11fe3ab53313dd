package shell

import (
	"context"
	"io/fs"
	"path"
	"sort"
	"strings"
	"testing"
)

// memVolume is a Volume in memory: what the runtime's host directories
// are, without a disk.
type memVolume map[string][]byte

func (v memVolume) ReadFile(name string) ([]byte, error) {
	if data, ok := v[name]; ok {
		return data, nil
	}
	return nil, fs.ErrNotExist
}
func (v memVolume) WriteFile(name string, data []byte, appendTo bool) error {
	if appendTo {
		data = append(v[name], data...)
	}
	v[name] = append([]byte{}, data...)
	return nil
}
func (v memVolume) Stat(name string) (bool, bool) {
	if name == "" {
		return true, true
	}
	_, ok := v[name]
	return ok, false
}
func (v memVolume) Mkdir(string, bool) error { return nil }
func (v memVolume) Remove(name string, _ bool) error {
	if _, ok := v[name]; !ok {
		return fs.ErrNotExist
	}
	delete(v, name)
	return nil
}
func (v memVolume) List(string) ([]string, error) {
	var out []string
	for name := range v {
		out = append(out, path.Base(name))
	}
	sort.Strings(out)
	return out, nil
}
func (v memVolume) Files() []File {
	var out []File
	for name, data := range v {
		out = append(out, File{Path: name, Size: int64(len(data))})
	}
	return out
}
func (v memVolume) Info(name string) (FileInfo, error) {
	if exists, isDir := v.Stat(name); isDir {
		return FileInfo{Mode: fs.ModeDir | 0o777}, nil
	} else if exists {
		return FileInfo{Mode: 0o644}, nil
	}
	return FileInfo{}, fs.ErrNotExist
}
func (v memVolume) Create(name string, data []byte, _ fs.FileMode) error {
	return v.WriteFile(name, data, false)
}
func (v memVolume) FSType(string) (int64, error) { return TmpfsMagic, nil }

// A mounted volume's files are the volume's: read, written and listed
// through it; a read-only one refuses writes as the kernel does; what
// the image had below the mount point is hidden.
func TestMounts(t *testing.T) {
	fsys := NewFS()
	fsys.WriteFile("/etc/config/from-image", []byte("hidden"))
	config := memVolume{"special.how": []byte("very")}
	cache := memVolume{}
	fsys.Mount("/etc/config", config, true)
	fsys.Mount("/cache", cache, false)
	var out strings.Builder
	p := New(Options{FS: fsys, Stdout: &out, Stderr: &out})
	code, err := p.Script(context.Background(), `cat /etc/config/special.how; echo; ls /etc/config; echo x > /etc/config/new; echo one > /cache/runs; echo two >> /cache/runs; cat /cache/runs; rm /etc/config/special.how`)
	if err != nil {
		t.Fatal(err)
	}
	want := "very\nspecial.how\nsh: can't create /etc/config/new: Read-only file system\none\ntwo\nrm: can't remove '/etc/config/special.how': Read-only file system\n"
	if out.String() != want || code != 1 {
		t.Errorf("got (%d)\n%s\nwant (1)\n%s", code, out.String(), want)
	}
	if string(cache["runs"]) != "one\ntwo\n" {
		t.Errorf("the volume holds %q, want what the shell wrote", cache["runs"])
	}
	var paths []string
	for _, f := range fsys.Files() {
		paths = append(paths, f.Path)
	}
	if got := strings.Join(paths, " "); strings.Contains(got, "from-image") || !strings.Contains(got, "/etc/config/special.how") {
		t.Errorf("Files: %s", got)
	}
}

// fullVolume is a volume with no room left: every write fails, as on a
// tmpfs at its size.
type fullVolume struct{ memVolume }

func (v fullVolume) WriteFile(name string, data []byte, appendTo bool) error {
	if len(data) == 0 {
		return v.memVolume.WriteFile(name, data, appendTo) // creating a file needs no room
	}
	return ErrNoSpace
}

// A program whose output cannot be written says so as busybox does, and
// fails.
func TestWritesToAFullVolumeFailWithENOSPC(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{"echo hello > /full/a; echo $?", "sh: write error: No space left on device\n1\n"},
		{"printf '%s\\n' hello >> /full/a; echo $?", "printf: write error: No space left on device\n1\n"},
		{"echo x > /tmp/x; cat /tmp/x > /full/b; echo $?", "cat: write error: No space left on device\n1\n"},
	} {
		t.Run(tc.script, func(t *testing.T) {
			fsys := NewFS()
			fsys.Mount("/full", fullVolume{memVolume{}}, false)
			var out strings.Builder
			p := New(Options{FS: fsys, Stdout: &out, Stderr: &out})
			if _, err := p.Script(context.Background(), tc.script); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("got %q, want %q", out.String(), tc.want)
			}
		})
	}
}

// memFile is a volume whose root is one file, "" (a bind-mounted file).
type memFile struct{ memVolume }

func (v memFile) Stat(name string) (bool, bool) {
	_, ok := v.memVolume[name]
	return ok, false
}

// A file mounted alone (the kubelet's termination log, /etc/hosts) is
// written through to its volume, shows in its directory's listing, and
// cannot be removed; a read-only root refuses every write but the
// volumes'.
func TestFileMountsAndAReadOnlyRoot(t *testing.T) {
	term := memFile{memVolume{"": nil}}
	hosts := memFile{memVolume{"": []byte("127.0.0.1\tlocalhost\n")}}
	fsys := NewFS()
	fsys.WriteFile("/etc/hosts", []byte("the image's\n"))
	fsys.MountFile("/dev/termination-log", term, false)
	fsys.MountFile("/etc/hosts", hosts, true)
	fsys.Mount("/data", memVolume{}, false)
	fsys.SetReadOnlyRoot()
	var out strings.Builder
	p := New(Options{FS: fsys, Stdout: &out, Stderr: &out})
	if _, err := p.Exec(context.Background(), []string{"/bin/sh", "-c", `echo -n DONE > /dev/termination-log; ls /dev; cat /etc/hosts
echo x > /etc/hosts; rm /dev/termination-log; echo test > /file; touch /new; mkdir /dir; echo kept > /data/f; cat /data/f`}); err != nil {
		t.Fatal(err)
	}
	want := "termination-log\n127.0.0.1\tlocalhost\n" +
		"/bin/sh: can't create /etc/hosts: Read-only file system\n" +
		"rm: can't remove '/dev/termination-log': Device or resource busy\n" +
		"/bin/sh: can't create /file: Read-only file system\n" +
		"touch: /new: Read-only file system\n" +
		"mkdir: can't create directory '/dir': Read-only file system\n" +
		"kept\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	if string(term.memVolume[""]) != "DONE" {
		t.Errorf("the termination log holds %q, want what the process wrote", term.memVolume[""])
	}
}
