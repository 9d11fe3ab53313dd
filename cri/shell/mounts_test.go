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
