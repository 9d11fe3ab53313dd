package shell

import (
	"errors"
	"io/fs"
	"path"
	"strings"
)

// A container's volumes are mounted into its filesystem: below a mount
// point, files are the volume's (a directory on the node's disk the
// kubelet prepared: a ConfigMap's keys, an emptyDir shared by the pod's
// containers, a hostPath), not the image's. What the container writes
// there is the volume's, so the pod's other containers, and the next
// instance after a restart, see it.

// Volume is a mounted directory. Names are relative to its root, clean,
// "" for the root itself.
type Volume interface {
	ReadFile(name string) ([]byte, error)
	// WriteFile creates or replaces name (or appends to it) and makes
	// its parent directories.
	WriteFile(name string, data []byte, appendTo bool) error
	Stat(name string) (exists, isDir bool)
	Mkdir(name string, parents bool) error
	Remove(name string, recursive bool) error
	List(dir string) ([]string, error)
	// Files lists the regular files below the root, as "a/b".
	Files() []File
	// Info is stat(2) of name, through symlinks: its mode and owner
	// (stat.go).
	Info(name string) (FileInfo, error)
	// Create is open(2) with O_CREAT|O_TRUNC and a write: a new file gets
	// perm as it is (the process has applied its umask), an existing one
	// keeps its mode; its directory must exist.
	Create(name string, data []byte, perm fs.FileMode) error
	// FSType is statfs(2)'s f_type for name, the filesystem's magic number.
	FSType(name string) (int64, error)
}

// ErrReadOnly is what writing to a read-only mount fails with, in the
// words of the kernel's EROFS.
var ErrReadOnly = errors.New("Read-only file system")

// ErrNoSpace is what writing to a full volume fails with (a tmpfs at its
// size), in the words of the kernel's ENOSPC. A Volume's WriteFile
// returns it once it has written what fits.
var ErrNoSpace = errors.New("No space left on device")

type mount struct {
	at       string // the mount point, a clean absolute path
	vol      Volume
	readOnly bool
	file     bool // a mount of one file (MountFile), not of a directory
}

// Mount makes v's files appear at the directory at. A later mount
// deeper in the tree hides what an earlier one has there, as mounts do.
func (f *FS) Mount(at string, v Volume, readOnly bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	at = clean(at)
	f.mkdirAll(at)
	f.mounts = append(f.mounts, mount{at: at, vol: v, readOnly: readOnly})
}

// MountFile makes the file v's root is appear at the path at, as a bind
// mount of one file (the kubelet's /etc/hosts, a termination-log file, a
// subPath naming a ConfigMap key): reads and writes of at are v's root
// file's (name ""), and only at's directory is made.
func (f *FS) MountFile(at string, v Volume, readOnly bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	at = clean(at)
	f.mkdirAll(path.Dir(at))
	delete(f.files, at) // hidden by the mount anyway; the image's file is not listed twice
	f.mounts = append(f.mounts, mount{at: at, vol: v, readOnly: readOnly, file: true})
}

// mountOf is the innermost mount that holds name, and name below it.
// Callers hold f.mu.
func (f *FS) mountOf(name string) (*mount, string, bool) {
	var best *mount
	for i := range f.mounts {
		m := &f.mounts[i]
		if (name == m.at || strings.HasPrefix(name, m.at+"/") || m.at == "/") && (best == nil || len(m.at) > len(best.at)) {
			best = m
		}
	}
	if best == nil {
		return nil, "", false
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(name, best.at), "/")
	return best, rel, true
}

// writable is the mount's answer for a write below it.
func (m *mount) writable() error {
	if m.readOnly {
		return ErrReadOnly
	}
	return nil
}

// mountFiles lists the mounts' files as absolute paths. Callers hold f.mu.
func (f *FS) mountFiles() []File {
	var out []File
	for _, m := range f.mounts {
		for _, file := range m.vol.Files() {
			out = append(out, File{Path: path.Join(m.at, file.Path), Size: file.Size})
		}
	}
	return out
}
