package cri

import (
	"errors"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/mkube/mkube/images"
	"github.com/mkube/mkube/internal/mounttable"
)

// Memory-backed volumes: an emptyDir of medium Memory is a tmpfs that
// the kubelet mounted on the node (the node's /proc/mounts says where,
// and its size: package mounttable). Its files are the node's memory,
// not its disk, and here the runtime stands for the kernel: it keeps them
// in its own memory, never on the node's directory, so they are gone
// when the runtime starts afresh, as a tmpfs is when its node reboots.
// A write beyond the size fails with ENOSPC, "No space left on device";
// the bytes count toward the memory of the container that wrote them,
// as tmpfs pages are charged to the writer's memory cgroup (stats.go).

// memoryVolumes are the tmpfs mounts the runtime has files for, by node
// and mount point. The zero value is ready.
type memoryVolumes struct {
	mu     sync.Mutex
	byPath map[string]*tmpfs // "<node>:<mount point>"
}

// mountFor is the tmpfs that holds the node path p, if the node's table
// puts one there, and p inside it. It forgets the node's tmpfs mounts
// that the table no longer lists: the kubelet unmounted them with their
// pod.
func (mv *memoryVolumes) mountFor(node string, table []mounttable.Mount, p string) (*tmpfs, string, bool) {
	mv.mu.Lock()
	defer mv.mu.Unlock()
	if mv.byPath == nil {
		mv.byPath = map[string]*tmpfs{}
	}
	var mounts []mounttable.Mount
	listed := map[string]bool{}
	for _, m := range table {
		if m.Type == "tmpfs" {
			mounts = append(mounts, m)
			listed[node+":"+m.Point] = true
		}
	}
	for key := range mv.byPath {
		if strings.HasPrefix(key, node+":") && !listed[key] {
			delete(mv.byPath, key)
		}
	}
	m, rel, ok := mounttable.Under(mounts, p)
	if !ok {
		return nil, "", false
	}
	key := node + ":" + m.Point
	t := mv.byPath[key]
	if t == nil {
		t = newTmpfs(m.Size)
		mv.byPath[key] = t
	}
	return t, rel, true
}

// chargedTo is the bytes of every tmpfs that the container named by
// charge wrote.
func (mv *memoryVolumes) chargedTo(charge string) int64 {
	mv.mu.Lock()
	defer mv.mu.Unlock()
	var n int64
	for _, t := range mv.byPath {
		n += t.chargedTo(charge)
	}
	return n
}

// tmpfs is one memory-backed filesystem: files and directories by clean
// relative path ("" is its root), at most size bytes of files.
type tmpfs struct {
	mu    sync.Mutex
	size  int64 // 0: no limit
	used  int64
	files map[string]*memFile
	dirs  map[string]bool
	modes map[string]fs.FileMode // directories' permission bits, if not drwxr-xr-x (tmpfs_stat.go)
}

// memFile is a tmpfs file, whom its bytes are charged to, and its
// permission bits.
type memFile struct {
	data   []byte
	charge string
	mode   fs.FileMode
}

func newTmpfs(size int64) *tmpfs {
	return &tmpfs{size: size, files: map[string]*memFile{}, dirs: map[string]bool{"": true},
		modes: map[string]fs.FileMode{"": tmpfsRootMode}}
}

func (t *tmpfs) chargedTo(charge string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var n int64
	for _, f := range t.files {
		if f.charge == charge {
			n += int64(len(f.data))
		}
	}
	return n
}

func (t *tmpfs) mkdirAll(dir string) {
	for d := dir; d != "" && d != "." && !t.dirs[d]; d = parentOf(d) {
		t.dirs[d] = true
	}
}

// parentOf is the directory that holds the relative path p ("" for the
// root).
func parentOf(p string) string {
	if d := path.Dir(p); d != "." {
		return d
	}
	return ""
}

// tmpfsView is a tmpfs as one container's mount shows it: from its
// subPath down (root, "" for all of it), charging what it writes to the
// container.
type tmpfsView struct {
	t      *tmpfs
	root   string
	charge string
}

func (v tmpfsView) path(name string) string {
	return strings.TrimPrefix(path.Join(v.root, name), "/")
}

func (v tmpfsView) ReadFile(name string) ([]byte, error) {
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	p := v.path(name)
	if f, ok := v.t.files[p]; ok {
		return append([]byte{}, f.data...), nil
	}
	if v.t.dirs[p] {
		return nil, errors.New("Is a directory")
	}
	return nil, fs.ErrNotExist
}

// WriteFile writes what fits in the tmpfs and fails with ENOSPC if not
// all of it does, as write(2) does on a full tmpfs.
func (v tmpfsView) WriteFile(name string, data []byte, appendTo bool) error {
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	p := v.path(name)
	f := v.t.files[p]
	if f == nil {
		f = &memFile{charge: v.charge, mode: tmpfsFileMode}
		v.t.mkdirAll(parentOf(p))
		v.t.files[p] = f
	}
	return v.t.write(f, data, appendTo)
}

// write puts data in f, or what fits of it. Callers hold t.mu.
func (t *tmpfs) write(f *memFile, data []byte, appendTo bool) error {
	if !appendTo {
		t.used -= int64(len(f.data))
		f.data = nil
	}
	var err error
	if free := t.size - t.used; t.size > 0 && int64(len(data)) > free {
		data, err = data[:max(free, 0)], images.ErrNoSpace
	}
	f.data = append(f.data, data...)
	t.used += int64(len(data))
	return err
}

func (v tmpfsView) Stat(name string) (exists, isDir bool) {
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	p := v.path(name)
	if v.t.dirs[p] {
		return true, true
	}
	_, ok := v.t.files[p]
	return ok, false
}

func (v tmpfsView) Mkdir(name string, parents bool) error {
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	p := v.path(name)
	switch _, file := v.t.files[p]; {
	case v.t.dirs[p] && parents:
		return nil
	case v.t.dirs[p] || file:
		return fs.ErrExist
	case !parents && !v.t.dirs[parentOf(p)]:
		return fs.ErrNotExist
	}
	v.t.mkdirAll(p)
	return nil
}

func (v tmpfsView) Remove(name string, recursive bool) error {
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	p := v.path(name)
	if f, ok := v.t.files[p]; ok {
		v.t.used -= int64(len(f.data))
		delete(v.t.files, p)
		return nil
	}
	if !v.t.dirs[p] {
		return fs.ErrNotExist
	}
	if !recursive {
		return errors.New("Is a directory")
	}
	for q, f := range v.t.files {
		if strings.HasPrefix(q, p+"/") {
			v.t.used -= int64(len(f.data))
			delete(v.t.files, q)
		}
	}
	for d := range v.t.dirs {
		if d == p || strings.HasPrefix(d, p+"/") {
			delete(v.t.dirs, d)
			delete(v.t.modes, d)
		}
	}
	return nil
}

func (v tmpfsView) List(dir string) ([]string, error) {
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	p := v.path(dir)
	if _, ok := v.t.files[p]; ok {
		return []string{path.Base(p)}, nil
	}
	if !v.t.dirs[p] {
		return nil, fs.ErrNotExist
	}
	var names []string
	add := func(q string) {
		if q != p && parentOf(q) == p && !strings.HasPrefix(path.Base(q), ".") {
			names = append(names, path.Base(q))
		}
	}
	for q := range v.t.dirs {
		add(q)
	}
	for q := range v.t.files {
		add(q)
	}
	sort.Strings(names)
	return names, nil
}

func (v tmpfsView) Files() []images.File {
	v.t.mu.Lock()
	defer v.t.mu.Unlock()
	var out []images.File
	for q, f := range v.t.files {
		rel, ok := q, true
		if v.root != "" {
			rel, ok = strings.CutPrefix(q, v.root+"/")
		}
		if ok {
			out = append(out, images.File{Path: rel, Size: int64(len(f.data))})
		}
	}
	return out
}
