package shell

import (
	"errors"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
)

// FS is a container's filesystem: files and directories in memory, by
// clean absolute path. The runtime fills it from the image and the mounts;
// the process changes it (`touch /tmp/healthy`), and a probe or `kubectl
// exec` reads what the process wrote. It is safe to share between them.
type FS struct {
	mu     sync.Mutex
	files  map[string][]byte
	dirs   map[string]bool
	modes  map[string]fs.FileMode // permission bits that are not the default (stat.go)
	mounts []mount                // mounts.go
	// readOnlyRoot refuses the process's writes outside its mounts
	// (securityContext.readOnlyRootFilesystem): see SetReadOnlyRoot.
	readOnlyRoot bool
}

// SetReadOnlyRoot makes the container's own layer read-only, as
// readOnlyRootFilesystem: true has the runtime mount its root: the
// process's writes outside its volumes fail with EROFS ("Read-only file
// system"). The runtime calls it once it has set up the filesystem.
func (f *FS) SetReadOnlyRoot() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.readOnlyRoot = true
}

// writable says whether the process may write name: its mount's answer,
// or its own layer's.
func (f *FS) writable(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m, _, ok := f.mountOf(clean(name)); ok {
		return m.writable()
	}
	return f.rootWritable()
}

// rootWritable is the answer of the container's own layer to a write.
// Callers hold f.mu.
func (f *FS) rootWritable() error {
	if f.readOnlyRoot {
		return ErrReadOnly
	}
	return nil
}

// NewFS is a filesystem with the directories every image has.
func NewFS() *FS {
	f := &FS{files: map[string][]byte{}, dirs: map[string]bool{}}
	for _, d := range []string{"/", "/bin", "/etc", "/tmp", "/var", "/usr", "/root"} {
		f.dirs[d] = true
	}
	f.setMode("/tmp", fs.ModeSticky|0o777) // anyone may write there, and remove only their own files
	return f
}

// clean makes p absolute (relative to /, the working directory).
func clean(p string) string { return path.Clean("/" + p) }

// WriteFile creates or replaces a file, and its parent directories.
func (f *FS) WriteFile(name string, data []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name = clean(name)
	if m, rel, ok := f.mountOf(name); ok {
		if m.writable() == nil {
			m.vol.WriteFile(rel, data, false)
		}
		return
	}
	f.mkdirAll(path.Dir(name))
	f.files[name] = append([]byte{}, data...)
}

// ReadFile returns a file's content.
func (f *FS) ReadFile(name string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m, rel, ok := f.mountOf(clean(name)); ok {
		return m.vol.ReadFile(rel)
	}
	data, ok := f.files[clean(name)]
	if !ok {
		if f.dirs[clean(name)] {
			return nil, errors.New("Is a directory")
		}
		return nil, fs.ErrNotExist
	}
	return append([]byte{}, data...), nil
}

// Stat reports whether name exists and whether it is a directory.
func (f *FS) Stat(name string) (exists, isDir bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name = clean(name)
	if m, rel, ok := f.mountOf(name); ok {
		return m.vol.Stat(rel)
	}
	if f.dirs[name] {
		return true, true
	}
	_, ok := f.files[name]
	return ok, false
}

func (f *FS) mkdirAll(dir string) {
	for d := dir; !f.dirs[d]; d = path.Dir(d) {
		f.dirs[d] = true
	}
}

// Mkdir makes a directory; parents says whether missing parents are made
// too (mkdir -p), else they must exist.
func (f *FS) Mkdir(name string, parents bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	name = clean(name)
	if m, rel, ok := f.mountOf(name); ok {
		if err := m.writable(); err != nil {
			return err
		}
		return m.vol.Mkdir(rel, parents)
	}
	if err := f.rootWritable(); err != nil && !f.dirs[name] {
		return err
	}
	switch {
	case f.dirs[name] && parents:
		return nil
	case f.dirs[name] || f.files[name] != nil:
		return fs.ErrExist
	case !parents && !f.dirs[path.Dir(name)]:
		return fs.ErrNotExist
	}
	f.mkdirAll(name)
	return nil
}

// Remove deletes a file, or a directory with everything in it if
// recursive (rm -r).
func (f *FS) Remove(name string, recursive bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	name = clean(name)
	if m, rel, ok := f.mountOf(name); ok {
		switch {
		case rel == "":
			return errors.New("Device or resource busy") // a mount point
		case m.writable() != nil:
			return m.writable()
		}
		return m.vol.Remove(rel, recursive)
	}
	if err := f.rootWritable(); err != nil {
		return err
	}
	if _, ok := f.files[name]; ok {
		delete(f.files, name)
		delete(f.modes, name)
		return nil
	}
	if !f.dirs[name] {
		return fs.ErrNotExist
	}
	if !recursive {
		return errors.New("Is a directory")
	}
	prefix := strings.TrimSuffix(name, "/") + "/"
	for p := range f.files {
		if strings.HasPrefix(p, prefix) {
			delete(f.files, p)
		}
	}
	for d := range f.dirs {
		if d == name || strings.HasPrefix(d, prefix) {
			delete(f.dirs, d)
		}
	}
	for p := range f.modes {
		if p == name || strings.HasPrefix(p, prefix) {
			delete(f.modes, p)
		}
	}
	return nil
}

// List names what a directory holds, sorted.
func (f *FS) List(dir string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	dir = clean(dir)
	if m, rel, ok := f.mountOf(dir); ok {
		return m.vol.List(rel)
	}
	if !f.dirs[dir] {
		if _, ok := f.files[dir]; ok {
			return []string{path.Base(dir)}, nil
		}
		return nil, fs.ErrNotExist
	}
	var names []string
	for _, m := range []map[string]bool{f.dirs, keysOf(f.files)} {
		for p := range m {
			if p != dir && path.Dir(p) == dir {
				names = append(names, path.Base(p))
			}
		}
	}
	for _, m := range f.mounts {
		if m.file && path.Dir(m.at) == dir {
			names = append(names, path.Base(m.at)) // a file bound here (MountFile)
		}
	}
	sort.Strings(names)
	return names, nil
}

func keysOf(m map[string][]byte) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// openWrite is where `>` and `>>` write: the bytes land in the file when
// the command has written them.
func (f *FS) openWrite(name string, appendTo bool) (*fileWriter, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name = clean(name)
	if m, rel, ok := f.mountOf(name); ok {
		if err := m.writable(); err != nil {
			return nil, err
		}
		exists, isDir := m.vol.Stat(rel)
		if isDir {
			return nil, errors.New("Is a directory")
		}
		if parent := path.Dir(rel); parent != "." {
			if ok, dir := m.vol.Stat(parent); !ok || !dir {
				return nil, errors.New("nonexistent directory")
			}
		}
		if !appendTo || !exists {
			if err := m.vol.WriteFile(rel, nil, false); err != nil {
				return nil, err
			}
		}
		return &fileWriter{fs: f, name: name, vol: m.vol, rel: rel}, nil
	}
	if err := f.rootWritable(); err != nil {
		return nil, err
	}
	if f.dirs[name] {
		return nil, errors.New("Is a directory")
	}
	if !f.dirs[path.Dir(name)] {
		return nil, errors.New("nonexistent directory")
	}
	if !appendTo || f.files[name] == nil {
		f.files[name] = []byte{}
	}
	return &fileWriter{fs: f, name: name}, nil
}

type fileWriter struct {
	fs   *FS
	name string
	vol  Volume // a file on a mount: written through to it, at rel
	rel  string
}

func (w *fileWriter) Write(b []byte) (int, error) {
	if w.vol != nil {
		if err := w.vol.WriteFile(w.rel, b, true); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	w.fs.files[w.name] = append(w.fs.files[w.name], b...)
	return len(b), nil
}

// File is one regular file as Files lists it.
type File struct {
	Path string
	Size int64 // bytes
}

// Files lists every regular file, sorted by path: what `find / -type f`
// would find, which the runtime shows when a container is inspected.
func (f *FS) Files() []File {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]File, 0, len(f.files))
	for p, data := range f.files {
		if _, _, mounted := f.mountOf(p); !mounted { // hidden under a mount
			out = append(out, File{Path: p, Size: int64(len(data))})
		}
	}
	out = append(out, f.mountFiles()...)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// LayerBytes is the size of the container's writable layer, its
// overlayfs upperdir: the bytes of the files outside every mount that
// are not as lower, the image's files, has them. A file the container
// left alone is the image's, shared and read-only, and costs the layer
// nothing; one it wrote or changed counts whole, as overlayfs copies a
// file up whole. (What it deleted costs a whiteout: nothing here.)
func (f *FS) LayerBytes(lower map[string]string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var n int64
	for p, data := range f.files {
		if _, _, mounted := f.mountOf(p); mounted {
			continue
		}
		if orig, ok := lower[p]; ok && orig == string(data) {
			continue
		}
		n += int64(len(data))
	}
	return n
}
