package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

// The container's own layer answers stat(2), statfs(2) and open(2) as
// a container's overlayfs root would, and a mount answers for what is
// below it; failures are worded as Go's os package words them.
func TestStatOfTheContainersFiles(t *testing.T) {
	fsys := NewFS()
	fsys.WriteFile("/etc/os-release", []byte("x"))
	fsys.Mount("/etc/config", memVolume{"key": []byte("v")}, true)
	fsys.Mount("/cache", memVolume{}, false)
	p := New(Options{FS: fsys})
	if _, err := p.Script(context.Background(), "echo hi > /tmp/x; mkdir /tmp/d; echo y > /tmp/gone; rm /tmp/gone"); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Create("/tmp/private", []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Create("/tmp/private", []byte("again"), 0o777); err != nil { // truncated, its mode kept
		t.Fatal(err)
	}
	fsys.SetMode("/tmp/d", fs.ModeSetgid|0o770)
	info := func(name string) string {
		i, err := fsys.Info(name)
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("%v %d:%d", i.Mode, i.UID, i.GID)
	}
	create := func(name string) string {
		if err := fsys.Create(name, []byte("new"), 0o644); err != nil {
			return err.Error()
		}
		return "ok"
	}
	fsType := func(name string) string {
		magic, err := fsys.FSType(name)
		if err != nil {
			return err.Error()
		}
		return fmt.Sprint(magic)
	}
	for _, tc := range []struct{ name, got, want string }{
		{"an image's file is root's -rw-r--r--", info("/etc/os-release"), "-rw-r--r-- 0:0"},
		{"an image's directory is drwxr-xr-x", info("/etc"), "drwxr-xr-x 0:0"},
		{"/tmp is sticky and open to all", info("/tmp"), "dtrwxrwxrwx 0:0"},
		{"a file the shell wrote is 0666 less the umask", info("/tmp/x"), "-rw-r--r-- 0:0"},
		{"a new file has the mode it was created with, kept when it is truncated", info("/tmp/private"), "-rw------- 0:0"},
		{"a chmod-ed directory keeps its setgid bit", info("/tmp/d"), "dgrwxrwx--- 0:0"},
		{"a removed file is gone", info("/tmp/gone"), "stat /tmp/gone: no such file or directory"},
		{"a mount answers for its files", info("/etc/config/key"), "-rw-r--r-- 0:0"},
		{"and for its root", info("/etc/config"), "drwxrwxrwx 0:0"},
		{"a missing file is ENOENT in os.Stat's words", info("/nope"), "stat /nope: no such file or directory"},
		{"a read-only mount refuses a new file", create("/etc/config/new"), "open /etc/config/new: read-only file system"},
		{"a writable mount takes one", create("/cache/new"), "ok"},
		{"a file needs its directory", create("/no/such/file"), "open /no/such/file: no such file or directory"},
		{"a directory is not a file", create("/tmp/d"), "open /tmp/d: is a directory"},
		{"the container's root is overlayfs", fsType("/etc"), "2035054128"},
		{"a mount has its own filesystem", fsType("/cache"), "16914836"},
		{"statfs of nothing is a bare ENOENT", fsType("/nope"), "no such file or directory"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	if data, _ := fsys.ReadFile("/tmp/private"); string(data) != "again" {
		t.Errorf("/tmp/private holds %q, want what the second Create wrote", data)
	}
}

func TestErrnoOfTheFSErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want syscall.Errno
	}{
		{fs.ErrNotExist, syscall.ENOENT},
		{fmt.Errorf("open: %w", fs.ErrExist), syscall.EEXIST},
		{ErrReadOnly, syscall.EROFS},
		{ErrNoSpace, syscall.ENOSPC},
		{errors.New("Is a directory"), syscall.EISDIR},
		{&fs.PathError{Op: "stat", Path: "/node/x", Err: syscall.ENOTDIR}, syscall.ENOTDIR},
		{errors.New("something else"), syscall.EIO},
	} {
		if got := Errno(tc.err); got != tc.want {
			t.Errorf("Errno(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// A program learns the name it was called by, also inside a script, and
// the caller's name is back once it returns.
func TestArg0IsTheNameAProgramWasCalledBy(t *testing.T) {
	var names []string
	record := func(_ context.Context, p *Process, _ []string, _ io.Writer) (int, error) {
		names = append(names, p.Arg0())
		return 0, nil
	}
	p := New(Options{Programs: map[string]Program{"agnhost": record, "agnhost-2": record}})
	if _, err := p.Exec(context.Background(), []string{"/agnhost-2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Script(context.Background(), "agnhost; /bin/agnhost"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names, " "); got != "/agnhost-2 agnhost /bin/agnhost" || p.Arg0() != "" {
		t.Errorf("names %q, Arg0 after all returned %q", got, p.Arg0())
	}
}
