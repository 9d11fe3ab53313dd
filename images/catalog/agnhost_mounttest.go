package catalog

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"syscall"
	"time"

	"github.com/mkube/mkube/images/shell"
)

// `agnhost mounttest` is how Kubernetes' volume conformance tests look
// inside a container: it "creates files with specific file permissions,
// and outputs the filesystem type, owner, mode, permissions, content of
// the given files", one line each on stdout, which the tests find in the
// pod's log ("mode of file \"/etc/configmap-volume/data-1\": -rw-r--r--").
// It works on the container's filesystem as the process sees it, so what
// it prints is what the kubelet and the runtime made: the volume's
// defaultMode, an emptyDir's 0777, a tmpfs.
//
// The steps run in a fixed order, so one command can check a path's
// filesystem, write a file in it and read the file back; each flag left
// empty is skipped, a failed step is printed and the others still run,
// and the exit status is 1 if any failed:
//
//	--fs_type        statfs: "mount type of %q: tmpfs" (or f_type in decimal)
//	--new_file_0644  (and _0666, _0660, _0777) write "mount-tester new file\n"
//	                 with that mode (the umask is cleared first), read it back
//	--file_mode      "mode of file %q: -rw-r--r--" (Go's os.FileMode)
//	--file_perm      "perms of file %q: -rw-r--r--" (its permission bits)
//	--file_owner     "owner UID of %q: 0", "owner GID of %q: 0"
//	--file_content   "content of file %q: <content>"
//	--file_content_in_loop  read and print it every 2 s for --retry_time
//	                 seconds (180), stopping once it is the new-file
//	                 content unless --break_on_expected_content=false

// mounttestFlags are mounttest's flags, by normalized name.
var mounttestFlags = map[string]flagKind{
	"fs-type": stringFlagKind, "file-mode": stringFlagKind, "file-perm": stringFlagKind, "file-owner": stringFlagKind,
	"new-file-0644": stringFlagKind, "new-file-0666": stringFlagKind, "new-file-0660": stringFlagKind, "new-file-0777": stringFlagKind,
	"file-content": stringFlagKind, "file-content-in-loop": stringFlagKind,
	"retry-time": intFlagKind, "break-on-expected-content": boolFlagKind,
}

// mounttestContent is what mounttest writes in its new files, and the
// content its loop waits for.
const mounttestContent = "mount-tester new file\n"

// mounttestRetryInterval is how long the content loop sleeps between
// reads (the real one's time.Sleep(2 * time.Second)), on the clock.
const mounttestRetryInterval = 2 * time.Second

func mounttest(ctx context.Context, p *shell.Process, args []string, out io.Writer) (int, error) {
	flags, positional, err := parseFlags(args, mounttestFlags)
	if err == nil && len(positional) > 0 { // cobra.MaximumNArgs(0)
		err = fmt.Errorf("accepts at most 0 arg(s), received %d", len(positional))
	}
	if err != nil {
		fmt.Fprintf(p.Stderr, "Error: %v\n", err)
		return 1, nil
	}
	m := mounter{p: p, out: out}
	ok := m.fsType(flags["fs-type"])
	for _, nf := range []struct {
		flag string
		perm fs.FileMode
	}{{"new-file-0644", 0o644}, {"new-file-0666", 0o666}, {"new-file-0660", 0o660}, {"new-file-0777", 0o777}} {
		ok = m.readWriteNewFile(flags[nf.flag], nf.perm) && ok
	}
	ok = m.fileMode(flags["file-mode"]) && ok
	ok = m.filePerm(flags["file-perm"]) && ok
	ok = m.fileOwner(flags["file-owner"]) && ok
	ok = m.readFileContent(flags["file-content"]) && ok
	retry, breakOnExpected := 180, true
	if v, set := flags["retry-time"]; set {
		n, _ := strconv.ParseInt(v, 0, 64)
		retry = int(n)
	}
	if v, set := flags["break-on-expected-content"]; set {
		breakOnExpected, _ = strconv.ParseBool(v)
	}
	loopOK, err := m.readFileContentInLoop(ctx, flags["file-content-in-loop"], retry, breakOnExpected)
	if err != nil {
		return 137, err // killed while it looped
	}
	if !ok || !loopOK {
		return 1, nil
	}
	return 0, nil
}

// mounter runs mounttest's steps; each says whether it succeeded (an
// empty path is a step not asked for, which succeeds).
type mounter struct {
	p   *shell.Process
	out io.Writer
}

// fsType prints the filesystem type: "tmpfs" for TMPFS_MAGIC, any other
// magic number in decimal (61267 for ext4, 2035054128 for overlayfs).
func (m mounter) fsType(path string) bool {
	if path == "" {
		return true
	}
	magic, err := m.p.FS.FSType(path)
	if err != nil {
		fmt.Fprintf(m.out, "error from statfs(%q): %v\n", path, err)
		return false
	}
	name := strconv.FormatInt(magic, 10)
	if magic == shell.TmpfsMagic {
		name = "tmpfs"
	}
	fmt.Fprintf(m.out, "mount type of %q: %s\n", path, name)
	return true
}

// readWriteNewFile writes the new-file content with perm, as the umask
// is 0, and prints it as readFileContent does.
func (m mounter) readWriteNewFile(path string, perm fs.FileMode) bool {
	if path == "" {
		return true
	}
	if err := m.p.FS.Create(path, []byte(mounttestContent), perm); err != nil {
		fmt.Fprintf(m.out, "error writing new file %q: %v\n", path, err)
		return false
	}
	return m.readFileContent(path)
}

func (m mounter) fileMode(path string) bool {
	if path == "" {
		return true
	}
	info, err := m.p.FS.Info(path)
	if err != nil {
		fmt.Fprintf(m.out, "error from Stat(%q): %v\n", path, err)
		return false
	}
	fmt.Fprintf(m.out, "mode of file %q: %v\n", path, info.Mode)
	return true
}

func (m mounter) filePerm(path string) bool {
	if path == "" {
		return true
	}
	info, err := m.p.FS.Info(path)
	if err != nil {
		fmt.Fprintf(m.out, "error from Stat(%q): %v\n", path, err)
		return false
	}
	fmt.Fprintf(m.out, "perms of file %q: %v\n", path, info.Mode.Perm())
	return true
}

// fileOwner prints the owner as syscall.Stat gives it, whose error is a
// bare errno ("no such file or directory").
func (m mounter) fileOwner(path string) bool {
	if path == "" {
		return true
	}
	info, err := m.p.FS.Info(path)
	if err != nil {
		fmt.Fprintf(m.out, "error from stat(%q): %v\n", path, shell.Errno(err))
		return false
	}
	fmt.Fprintf(m.out, "owner UID of %q: %v\n", path, info.UID)
	fmt.Fprintf(m.out, "owner GID of %q: %v\n", path, info.GID)
	return true
}

func (m mounter) readFileContent(path string) bool {
	if path == "" {
		return true
	}
	data, err := m.readFile(path)
	if err != nil {
		fmt.Fprintf(m.out, "error reading file content for %q: %v\n", path, err)
		return false
	}
	fmt.Fprintf(m.out, "content of file %q: %v\n", path, string(data))
	return true
}

// readFile is os.ReadFile: its error is the *fs.PathError Go gives,
// "open /x: no such file or directory", or for a directory, which opens
// but cannot be read, "read /x: is a directory".
func (m mounter) readFile(path string) ([]byte, error) {
	data, err := m.p.FS.ReadFile(path)
	if err == nil {
		return data, nil
	}
	op, errno := "open", shell.Errno(err)
	if errno == syscall.EISDIR {
		op = "read"
	}
	return nil, &fs.PathError{Op: op, Path: path, Err: errno}
}

// readFileContentInLoop reads and prints the file every 2 s of the
// clock until retry seconds have passed since it started, or, if
// breakOnExpected, until it holds the new-file content; ok is whether
// the last read succeeded. It runs until it is killed if it has to (it
// does not handle SIGTERM), which is err.
func (m mounter) readFileContentInLoop(ctx context.Context, path string, retry int, breakOnExpected bool) (ok bool, err error) {
	if path == "" {
		return true, nil
	}
	clock := m.p.Clock
	ok = true
	for start := clock.Now(); clock.Since(start) < time.Duration(retry)*time.Second; {
		data, rerr := m.readFile(path)
		ok = rerr == nil
		switch {
		case rerr != nil:
			fmt.Fprintf(m.out, "Error reading file %s: %v, retrying\n", path, rerr)
		default:
			fmt.Fprintf(m.out, "content of file %q: %v\n", path, string(data))
			if !breakOnExpected {
				break
			}
			if string(data) == mounttestContent {
				return true, nil
			}
			fmt.Fprintf(m.out, "Unexpected content. Expected: %s. Retrying\n", mounttestContent)
		}
		select {
		case <-ctx.Done():
			return ok, ctx.Err()
		case <-clock.After(mounttestRetryInterval):
		}
	}
	return ok, nil
}
