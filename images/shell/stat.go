package shell

import (
	"errors"
	"io/fs"
	"path"
	"syscall"
)

// What stat(2), statfs(2) and open(2) with O_CREAT tell a process about
// its files: their mode (type and permission bits), owner and the type of
// the filesystem they are on. `agnhost mounttest`, which Kubernetes'
// volume conformance tests run, prints exactly these, so a ConfigMap's
// defaultMode or an emptyDir's 0777 must be visible from inside.
//
// A file of the image (the container's own layer) is -rw-r--r-- and a
// directory drwxr-xr-x (0666 and 0777 under the default umask 022), /tmp
// is dtrwxrwxrwx, all owned by root: the simulated process runs as root.
// A volume's files have the modes the kubelet gave them (Volume.Info).

// FileInfo is what stat(2) says of a file.
type FileInfo struct {
	Mode     fs.FileMode // as Go's os.Stat gives it: "-rw-r--r--", "drwxrwxrwx", "dtrwxrwxrwx"
	UID, GID uint32
}

// The filesystems' magic numbers, statfs(2)'s f_type (linux/magic.h).
const (
	OverlayfsMagic = 0x794c7630 // a container's root: containerd's overlayfs snapshot
	TmpfsMagic     = 0x01021994
	Cgroup2Magic   = 0x63677270 // /sys/fs/cgroup, the container's cgroup (cgroup v2)
)

// Default modes of what the image's layer holds (see above).
const (
	defaultFileMode = 0o644
	defaultDirMode  = 0o755
)

// Errno is the error number a system call fails with for err, an error
// of the FS or of a Volume: ENOENT for a file that is not there, EROFS
// for a read-only mount, EISDIR for a directory where a file is wanted.
// A program words its errors with it as Go's os package does
// ("open /x: no such file or directory").
func Errno(err error) syscall.Errno {
	var errno syscall.Errno
	switch {
	case errors.As(err, &errno):
		return errno
	case errors.Is(err, fs.ErrNotExist):
		return syscall.ENOENT
	case errors.Is(err, fs.ErrExist):
		return syscall.EEXIST
	case errors.Is(err, ErrReadOnly):
		return syscall.EROFS
	case errors.Is(err, ErrNoSpace):
		return syscall.ENOSPC
	case err != nil && err.Error() == "Is a directory":
		return syscall.EISDIR
	}
	return syscall.EIO
}

// Info is stat(2) of name, following symlinks (a ConfigMap's key is a
// link to ..data/<key>: its mode is the file's). A failure is the
// *fs.PathError os.Stat would return: "stat /x: no such file or directory".
func (f *FS) Info(name string) (FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := clean(name)
	if m, rel, ok := f.mountOf(p); ok {
		info, err := m.vol.Info(rel)
		if err != nil {
			return FileInfo{}, &fs.PathError{Op: "stat", Path: name, Err: Errno(err)}
		}
		return info, nil
	}
	switch _, isFile := f.files[p]; {
	case f.dirs[p]:
		return FileInfo{Mode: fs.ModeDir | f.modeOf(p, defaultDirMode)}, nil
	case isFile:
		return FileInfo{Mode: f.modeOf(p, defaultFileMode)}, nil
	}
	return FileInfo{}, &fs.PathError{Op: "stat", Path: name, Err: syscall.ENOENT}
}

// modeOf is the permission bits of p, def if it was never chmod-ed.
// Callers hold f.mu.
func (f *FS) modeOf(p string, def fs.FileMode) fs.FileMode {
	if m, ok := f.modes[p]; ok {
		return m
	}
	return def
}

// Create is open(2) with O_WRONLY|O_CREAT|O_TRUNC and one write(2), as
// Go's os.WriteFile: a new file gets perm (the caller has applied its
// umask), an existing one keeps its mode; the directory must exist. A
// failure is the *fs.PathError os.WriteFile would return: "open
// /etc/config/x: read-only file system".
func (f *FS) Create(name string, data []byte, perm fs.FileMode) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := clean(name)
	fail := func(err error) error { return &fs.PathError{Op: "open", Path: name, Err: Errno(err)} }
	if m, rel, ok := f.mountOf(p); ok {
		if err := m.writable(); err != nil {
			return fail(err)
		}
		if err := m.vol.Create(rel, data, perm); errors.Is(err, ErrNoSpace) {
			return &fs.PathError{Op: "write", Path: name, Err: syscall.ENOSPC} // made, but not all written
		} else if err != nil {
			return fail(err)
		}
		return nil
	}
	if err := f.rootWritable(); err != nil {
		return fail(err)
	}
	switch {
	case f.dirs[p]:
		return fail(syscall.EISDIR)
	case !f.dirs[path.Dir(p)]:
		return fail(syscall.ENOENT)
	}
	if _, exists := f.files[p]; !exists {
		f.setMode(p, perm)
	}
	f.files[p] = append([]byte{}, data...)
	return nil
}

// SetMode gives a file of the container's own layer its permission
// bits, as chmod(2): how the runtime keeps the mode of a file it copies
// in (a bind-mounted file). Below a mount it does nothing.
func (f *FS) SetMode(name string, perm fs.FileMode) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := clean(name)
	if _, _, ok := f.mountOf(p); ok {
		return
	}
	if _, isFile := f.files[p]; isFile || f.dirs[p] {
		f.setMode(p, perm)
	}
}

// setMode records p's permission bits. Callers hold f.mu.
func (f *FS) setMode(p string, perm fs.FileMode) {
	if f.modes == nil {
		f.modes = map[string]fs.FileMode{}
	}
	f.modes[p] = perm & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}

// FSType is statfs(2)'s f_type for name: the magic number of the
// filesystem it is on (TmpfsMagic, OverlayfsMagic for the container's
// root, the node's disk's for a volume on it). A failure is the bare
// errno, as syscall.Statfs returns it.
func (f *FS) FSType(name string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := clean(name)
	if m, rel, ok := f.mountOf(p); ok {
		magic, err := m.vol.FSType(rel)
		if err != nil {
			return 0, Errno(err)
		}
		return magic, nil
	}
	if _, isFile := f.files[p]; !isFile && !f.dirs[p] {
		return 0, syscall.ENOENT
	}
	return OverlayfsMagic, nil
}
