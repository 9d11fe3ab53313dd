package cri

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/mkube/mkube/images"
)

// boundFile is one file of the node's disk bind-mounted into a container,
// as containerd binds the files the kubelet prepares: /etc/hosts, the
// termination-log file, a subPath naming one key of a ConfigMap. A bind
// mount holds the inode the path named when the container was created,
// so:
//
//   - what the container writes is the node's file: the kubelet reads the
//     termination message from it once the container has exited;
//   - a file replaced on the node after that (the atomic writer swaps a
//     ConfigMap's files for new ones) is not the container's any more: it
//     keeps the content it had, as the old inode does.
//
// The path is resolved through symlinks when the mount is made (a
// ConfigMap key is a link into ..data); while it exists it is the file,
// and once it is gone the last content read or written stands for the
// inode the mount still holds.
type boundFile struct {
	path hostDir // the resolved file, as a Volume whose root "" is the file

	mu   sync.Mutex
	last []byte          // the content last read or written
	info images.FileInfo // its stat(2) when bound
}

// bindFile binds the file at host (a real path).
func bindFile(host string) (*boundFile, error) {
	resolved, err := filepath.EvalSymlinks(host)
	if err != nil {
		return nil, err
	}
	b := &boundFile{path: hostDir(resolved)}
	if b.last, err = os.ReadFile(resolved); err != nil {
		return nil, err
	}
	if b.info, err = b.path.Info(""); err != nil {
		return nil, err
	}
	return b, nil
}

// errNotDir is what a path below a file fails with (ENOTDIR).
var errNotDir error = syscall.ENOTDIR

// gone: the node's file was removed or replaced since it was bound.
func (b *boundFile) gone() bool {
	_, err := os.Stat(string(b.path))
	return err != nil
}

func (b *boundFile) ReadFile(name string) ([]byte, error) {
	if name != "" {
		return nil, errNotDir
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if data, err := os.ReadFile(string(b.path)); err == nil {
		b.last = data
	}
	return append([]byte{}, b.last...), nil
}

func (b *boundFile) WriteFile(name string, data []byte, appendTo bool) error {
	if name != "" {
		return errNotDir
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if appendTo {
		b.last = append(b.last, data...)
	} else {
		b.last = append([]byte{}, data...)
	}
	if b.gone() {
		return nil // only the container sees it now
	}
	return b.path.WriteFile("", data, appendTo)
}

func (b *boundFile) Stat(name string) (exists, isDir bool) {
	return name == "", false
}

func (b *boundFile) Mkdir(string, bool) error { return errNotDir }

func (b *boundFile) Remove(string, bool) error { return errNotDir }

func (b *boundFile) List(dir string) ([]string, error) {
	if dir != "" {
		return nil, errNotDir
	}
	return []string{filepath.Base(string(b.path))}, nil
}

// Files is the file itself, at the mount point ("." below it).
func (b *boundFile) Files() []images.File {
	data, _ := b.ReadFile("")
	return []images.File{{Path: ".", Size: int64(len(data))}}
}

func (b *boundFile) Info(name string) (images.FileInfo, error) {
	if name != "" {
		return images.FileInfo{}, errNotDir
	}
	if info, err := b.path.Info(""); err == nil {
		return info, nil
	}
	return b.info, nil
}

func (b *boundFile) Create(name string, data []byte, perm fs.FileMode) error {
	if name != "" {
		return errNotDir
	}
	// An existing file keeps its mode: the bound one always exists.
	return b.WriteFile("", data, false)
}

func (b *boundFile) FSType(name string) (int64, error) {
	if name != "" {
		return 0, errNotDir
	}
	return b.path.FSType("")
}
