package volumemanager

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/client"
)

// A volumeMount may show a subdirectory of its volume: subPath names it,
// or subPathExpr, expanded with the container's environment (Options'
// SubPath, package kubelet's subpath.go). The kubelet (makeMounts)
// checks the result and makes the directory if it is missing, before
// the container is created; a subPath it cannot use fails the container
// with CreateContainerConfigError, in Kubernetes' words.

// PrepareSubPaths checks c's subPaths and makes each missing one a
// directory of its volume, on the node's disk. A tmpfs volume's
// directory is made by the runtime, which holds its files.
func (m *Manager) PrepareSubPaths(pod *corev1.Pod, c corev1.Container, env []corev1.EnvVar) error {
	for _, vm := range c.VolumeMounts {
		sub, err := m.opts.SubPath(vm, env)
		if err != nil {
			return err
		}
		v, ok := VolumeNamed(pod, vm.Name)
		if sub == "" || !ok || IsMemory(v) || v.Image != nil || m.opts.NodeRoot == "" { // an image's subPath is the runtime's
			continue
		}
		root := m.OnDisk(Dir(pod.UID, v))
		dir := m.OnDisk(path.Join(Dir(pod.UID, v), sub))
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		// The new directory gets the volume's own mode (makeMounts:
		// SafeMakeDir with GetMode of the volume), so that a subPath of
		// an emptyDir is drwxrwxrwx as the emptyDir is.
		perm := fs.FileMode(0o755)
		if fi, err := os.Stat(root); err == nil {
			perm = fi.Mode() & (fs.ModePerm | fs.ModeSetgid | fs.ModeSticky)
		}
		if err := mkdirWithMode(dir, perm); err != nil {
			// As the kubelet: the detail stays in the log, about the host.
			m.opts.Log.Warn("could not make a subPath directory", "pod", client.KeyOf(pod), "container", c.Name, "volume", vm.Name, "err", err)
			return fmt.Errorf("failed to create subPath directory for volumeMount %q of container %q", vm.Name, c.Name)
		}
	}
	return nil
}

// mkdirWithMode makes dir and its missing parents, then gives dir perm
// itself, which mkdir's umask would cut.
func mkdirWithMode(dir string, perm fs.FileMode) error {
	if err := os.MkdirAll(dir, perm); err != nil {
		return err
	}
	return os.Chmod(dir, perm)
}
