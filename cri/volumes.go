package cri

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/images"
	"github.com/mkube/mkube/internal/mounttable"
)

// A container's mounts, as containerd bind-mounts them: each CRI Mount
// names a directory (or a file) on the node, host_path, to show at
// container_path. A node here is simulated, so its disk is a directory
// of the real machine, Options.NodeRoot/<node>: the kubelet writes a
// pod's volumes under <that>/var/lib/kubelet/pods/<uid>/volumes (as a
// real kubelet writes /var/lib/kubelet/pods/...), and a hostPath volume
// /data is <that>/data. Files read and written below a mount point are
// that directory's, live: a ConfigMap the kubelet updates, what another
// container of the pod writes to a shared emptyDir.
//
// A mount of a single file (the kubelet's /etc/hosts and termination-log
// files, a subPath of a ConfigMap key) is bound to the file as it is when
// the container is created, as a bind mount is to its inode (files.go):
// what the container writes reaches the node's file, which is how the
// kubelet reads a termination message, but the ConfigMap's later
// updates, which replace the file, do not reach the container.
//
// An emptyDir of medium Memory is not on the node's disk at all: the
// kubelet mounted a tmpfs there, and the runtime keeps its files
// (tmpfs.go).

// nodeDisk is the real directory that stands for node's "/".
func (s *Server) nodeDisk(node string) string {
	if node == "" {
		node = "default"
	}
	return filepath.Join(s.opts.NodeRoot, node)
}

// mountVolumes mounts c's CRI mounts into its filesystem fsys. A mount
// of a directory in a tmpfs (the node's mount table says which) shows
// the tmpfs, whose files the runtime holds (tmpfs.go), rather than the
// directory below it, as a bind mount of a tmpfs's directory does.
func (s *Server) mountVolumes(fsys *images.FS, c *container, sb *sandbox) error {
	for _, m := range c.config.GetMounts() {
		if m.GetImage().GetImage() != "" {
			if err := s.mountImage(fsys, m); err != nil { // imagevolumes.go
				return err
			}
		}
	}
	if s.opts.NodeRoot == "" {
		return nil // no nodes' disks: the other mounts are recorded, not made
	}
	node := sb.config.GetLabels()[labelNodeName]
	table, err := mounttable.Read(s.nodeDisk(node))
	if err != nil {
		return err
	}
	for _, m := range c.config.GetMounts() {
		if m.GetImage().GetImage() != "" {
			continue // mounted above
		}
		if t, rel, ok := s.memory.mountFor(node, table, m.GetHostPath()); ok {
			mountTmpfs(fsys, tmpfsView{t: t, charge: memoryCharge(c)}, rel, m)
			continue
		}
		host := filepath.Join(s.nodeDisk(node), filepath.Clean("/"+m.GetHostPath()))
		fi, err := os.Stat(host)
		if err != nil {
			return fmt.Errorf("failed to mount %s to %s: %w", m.GetHostPath(), m.GetContainerPath(), err)
		}
		if !fi.IsDir() {
			f, err := bindFile(host)
			if err != nil {
				return err
			}
			fsys.MountFile(m.GetContainerPath(), f, m.GetReadonly())
			continue
		}
		fsys.Mount(m.GetContainerPath(), hostDir(host), m.GetReadonly())
	}
	return nil
}

// mountTmpfs mounts the directory rel of a tmpfs (a subPath: made if
// missing, with the volume's mode, as the kubelet makes a subPath's
// directory on a disk) or copies the file rel names, with its mode, as a
// bind mount of a file is fixed to it.
func mountTmpfs(fsys *images.FS, v tmpfsView, rel string, m *runtimeapi.Mount) {
	switch exists, isDir := v.Stat(rel); {
	case exists && !isDir:
		data, _ := v.ReadFile(rel)
		info, _ := v.Info(rel)
		fsys.WriteFile(m.GetContainerPath(), data)
		fsys.SetMode(m.GetContainerPath(), info.Mode)
		return
	case !exists:
		v.mkdirLikeRoot(rel) // tmpfs_stat.go
	}
	v.root = rel
	fsys.Mount(m.GetContainerPath(), v, m.GetReadonly())
}

// memoryCharge names the container that tmpfs bytes it writes are
// charged to: by the pod's sandbox and the container's name, so that a
// restarted instance, a new container, still holds what the last one
// wrote, as the pod's memory cgroup does.
func memoryCharge(c *container) string {
	return c.sandboxID + "/" + c.config.GetMetadata().GetName()
}

// hostDir is a directory of the node's disk as a images.Volume.
type hostDir string

func (d hostDir) path(name string) string { return filepath.Join(string(d), filepath.FromSlash(name)) }

func (d hostDir) ReadFile(name string) ([]byte, error) {
	data, err := os.ReadFile(d.path(name))
	var pe *fs.PathError
	if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "is a directory") {
		return nil, errors.New("Is a directory")
	}
	return data, err
}

func (d hostDir) WriteFile(name string, data []byte, appendTo bool) error {
	p := d.path(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendTo {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(p, flags, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (d hostDir) Stat(name string) (exists, isDir bool) {
	fi, err := os.Stat(d.path(name))
	if err != nil {
		return false, false
	}
	return true, fi.IsDir()
}

func (d hostDir) Mkdir(name string, parents bool) error {
	if parents {
		return os.MkdirAll(d.path(name), 0o755)
	}
	return os.Mkdir(d.path(name), 0o755)
}

func (d hostDir) Remove(name string, recursive bool) error {
	p := d.path(name)
	if fi, err := os.Lstat(p); err != nil {
		return fs.ErrNotExist
	} else if fi.IsDir() && !recursive {
		return errors.New("Is a directory")
	}
	return os.RemoveAll(p)
}

// List names a directory's entries, as `ls` shows them: names starting
// with "." (a ConfigMap volume's ..data) are hidden, as ls hides them.
func (d hostDir) List(dir string) ([]string, error) {
	p := d.path(dir)
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fs.ErrNotExist
	}
	if !fi.IsDir() {
		return []string{filepath.Base(p)}, nil
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

func (d hostDir) Files() []images.File {
	var out []images.File
	filepath.WalkDir(string(d), func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || strings.Contains(p, string(filepath.Separator)+"..") {
			return nil // the atomic writer's timestamped copies are not the volume's names
		}
		fi, err := os.Stat(p) // through the key's symlink
		if err != nil || fi.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(string(d), p)
		out = append(out, images.File{Path: filepath.ToSlash(rel), Size: fi.Size()})
		return nil
	})
	return out
}

// Info is the file's real stat(2) on the node's disk: the mode the
// kubelet gave it (a ConfigMap key's defaultMode, an emptyDir's 0777)
// or the container's process did (Create), and its owner.
func (d hostDir) Info(name string) (images.FileInfo, error) {
	fi, err := os.Stat(d.path(name))
	if err != nil {
		return images.FileInfo{}, err
	}
	info := images.FileInfo{Mode: fi.Mode()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		info.UID, info.GID = st.Uid, st.Gid
	}
	return info, nil
}

// Create writes the file as the container's process would, with its
// own umask: a new file is chmod-ed to perm, since the runtime's umask
// (022) is not the container's (`agnhost mounttest` clears it to make
// 0666 and 0777 files).
func (d hostDir) Create(name string, data []byte, perm fs.FileMode) error {
	p := d.path(name)
	_, err := os.Lstat(p)
	created := errors.Is(err, fs.ErrNotExist)
	if err := os.WriteFile(p, data, perm); err != nil {
		return err
	}
	if created {
		return os.Chmod(p, perm)
	}
	return nil
}

// FSType is the real statfs(2) of the node's directory: the type of the
// disk it is on, as a volume of the node's disk shows in a container.
func (d hostDir) FSType(name string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(d.path(name), &st); err != nil {
		return 0, err
	}
	return int64(st.Type), nil
}
