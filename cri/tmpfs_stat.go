package cri

import (
	"io/fs"
	"syscall"

	"github.com/mkube/mkube/images"
)

// What stat(2) and statfs(2) say of a tmpfs' files. The kubelet mounts
// an emptyDir's tmpfs without a mode= option, so its root is the
// kernel's default for a tmpfs, 1777: dtrwxrwxrwx, which
// `agnhost mounttest --file_perm` prints as -rwxrwxrwx, what Kubernetes'
// "volume on tmpfs should have the correct mode" expects. What a
// container creates there is its process's (root's): a file written by
// the shell is 0666 less the umask 022, a directory 0777 less it.

const (
	tmpfsRootMode = fs.ModeSticky | 0o777
	tmpfsFileMode = 0o644
	tmpfsDirMode  = 0o755
)

// Info is the file's mode; everything in a tmpfs here is root's.
func (v tmpfsView) Info(name string) (images.FileInfo, error) {
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	p := v.path(name)
	if f, ok := v.t.files[p]; ok {
		return images.FileInfo{Mode: f.mode}, nil
	}
	if v.t.dirs[p] {
		mode, ok := v.t.modes[p]
		if !ok {
			mode = tmpfsDirMode
		}
		return images.FileInfo{Mode: fs.ModeDir | mode}, nil
	}
	return images.FileInfo{}, fs.ErrNotExist
}

// Create makes a file of mode perm (or truncates one, keeping its mode)
// in an existing directory and writes data, what fits of it.
func (v tmpfsView) Create(name string, data []byte, perm fs.FileMode) error {
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	p := v.path(name)
	switch {
	case v.t.dirs[p]:
		return syscall.EISDIR
	case !v.t.dirs[parentOf(p)]:
		return syscall.ENOENT
	}
	f := v.t.files[p]
	if f == nil {
		f = &memFile{charge: v.charge, mode: perm}
		v.t.files[p] = f
	}
	return v.t.write(f, data, false)
}

// FSType is TMPFS_MAGIC for whatever is in the tmpfs.
func (v tmpfsView) FSType(name string) (int64, error) {
	if exists, _ := v.Stat(name); !exists {
		return 0, syscall.ENOENT
	}
	return images.TmpfsMagic, nil
}

// mkdirLikeRoot makes the directory name, with its parents, and gives it
// the mode of the tmpfs' root, as the kubelet makes a missing subPath of
// a volume (makeMounts: SafeMakeDir with the volume's own mode), so that
// a subPath of a tmpfs is dtrwxrwxrwx too.
func (v tmpfsView) mkdirLikeRoot(name string) {
	v.Mkdir(name, true)
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	v.t.modes[v.path(name)] = v.t.modes[""]
}
