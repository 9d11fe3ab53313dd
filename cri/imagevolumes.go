package cri

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/images"
)

// An image volume (a pod volume of source image, Kubernetes 1.33's
// ImageVolume): the kubelet pulls the image and asks for a mount of it
// (a CRI Mount with image set, and image_sub_path to show one directory
// of it); containerd mounts the image's root filesystem there, read-only,
// as the OCI artifact or image it is. Here the image's files are what the
// catalog says it holds.

// mountImage mounts image volume m into fsys. The image must be on the
// node: the kubelet pulled it. Callers hold s.mu.
func (s *Server) mountImage(fsys *images.FS, m *runtimeapi.Mount) error {
	img, err := s.findImage(m.GetImage().GetImage())
	if err != nil {
		return fmt.Errorf("failed to mount image volume %s to %s: %w", m.GetImage().GetImage(), m.GetContainerPath(), err)
	}
	v := imageVolume{files: map[string]string{}}
	for name, data := range images.Lookup(img.ref).Files {
		v.files[strings.TrimPrefix(path.Clean("/"+name), "/")] = data
	}
	if sub := m.GetImageSubPath(); sub != "" {
		v.root = strings.TrimPrefix(path.Clean("/"+sub), "/")
		if exists, isDir := v.Stat(""); !exists || !isDir {
			return fmt.Errorf("failed to mount image volume %s to %s: subpath %q is not a directory of the image", img.ref, m.GetContainerPath(), sub)
		}
	}
	fsys.Mount(m.GetContainerPath(), v, true) // image volumes are always read-only
	return nil
}

// imageVolume is an image's files as a read-only images.Volume, from its
// directory root ("" for all of it).
type imageVolume struct {
	files map[string]string // by path, without the leading "/"
	root  string
}

func (v imageVolume) path(name string) string {
	return strings.TrimPrefix(path.Join(v.root, name), "/")
}

func (v imageVolume) isDir(p string) bool {
	if p == "" || p == "." {
		return true
	}
	for name := range v.files {
		if strings.HasPrefix(name, p+"/") {
			return true
		}
	}
	return false
}

func (v imageVolume) ReadFile(name string) ([]byte, error) {
	p := v.path(name)
	if data, ok := v.files[p]; ok {
		return []byte(data), nil
	}
	if v.isDir(p) {
		return nil, fmt.Errorf("Is a directory")
	}
	return nil, fs.ErrNotExist
}

func (v imageVolume) WriteFile(string, []byte, bool) error { return images.ErrReadOnly }
func (v imageVolume) Mkdir(string, bool) error             { return images.ErrReadOnly }
func (v imageVolume) Remove(string, bool) error            { return images.ErrReadOnly }
func (v imageVolume) Create(string, []byte, fs.FileMode) error {
	return images.ErrReadOnly
}

func (v imageVolume) Stat(name string) (exists, isDir bool) {
	p := v.path(name)
	if _, ok := v.files[p]; ok {
		return true, false
	}
	d := v.isDir(p)
	return d, d
}

func (v imageVolume) List(dir string) ([]string, error) {
	p := v.path(dir)
	if _, ok := v.files[p]; ok {
		return []string{path.Base(p)}, nil
	}
	if !v.isDir(p) {
		return nil, fs.ErrNotExist
	}
	seen := map[string]bool{}
	prefix := ""
	if p != "" {
		prefix = p + "/"
	}
	for name := range v.files {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			first, _, _ := strings.Cut(rest, "/")
			seen[first] = true
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

func (v imageVolume) Files() []images.File {
	var out []images.File
	prefix := ""
	if v.root != "" {
		prefix = v.root + "/"
	}
	for name, data := range v.files {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			out = append(out, images.File{Path: rest, Size: int64(len(data))})
		}
	}
	return out
}

// Info: an image's files are root's, -rw-r--r--, in drwxr-xr-x directories.
func (v imageVolume) Info(name string) (images.FileInfo, error) { return rootsFile(v.Stat(name)) }

// rootsFile is the stat(2) of a read-only volume's file or directory:
// root's, -rw-r--r-- or drwxr-xr-x.
func rootsFile(exists, isDir bool) (images.FileInfo, error) {
	switch {
	case isDir:
		return images.FileInfo{Mode: fs.ModeDir | 0o755}, nil
	case exists:
		return images.FileInfo{Mode: 0o644}, nil
	}
	return images.FileInfo{}, fs.ErrNotExist
}

func (v imageVolume) FSType(string) (int64, error) { return images.OverlayfsMagic, nil }
