package kubelet

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/kubelet/volumemanager"
)

// A volumeMount may show a subdirectory of its volume: subPath names it,
// or subPathExpr, expanded with the container's environment, as
// `subPathExpr: $(POD_NAME)` gives each pod of a Deployment its own
// directory of a shared volume. The kubelet (makeMounts) checks the
// result and makes the directory if it is missing, before the container
// is created; a subPath it cannot use fails the container with
// CreateContainerConfigError, in Kubernetes' words.

// subPathOf is the subdirectory of its volume that mount m shows ("" for
// all of it). subPathExpr takes $(VAR) from env, the container's final
// environment, by Kubernetes' expansion rules (expansion.go); a variable
// that is undefined or empty is an error, as the kubelet's
// ExpandContainerVolumeMounts says:
//
//	subPathExpr "logs/$(POD_NAME)", POD_NAME=web-1 = "logs/web-1"
//	subPathExpr "$(NOPE)"                          = missing value for NOPE
func subPathOf(m corev1.VolumeMount, env []corev1.EnvVar) (string, error) {
	sub := m.SubPath
	if m.SubPathExpr != "" {
		values := make(map[string]string, len(env))
		for _, e := range env {
			values[e.Name] = e.Value
		}
		missing := sets.New[string]()
		sub = expandVars(m.SubPathExpr, func(name string) (string, bool) {
			if values[name] == "" {
				missing.Insert(name)
			}
			return values[name], true
		})
		if missing.Len() > 0 {
			return "", fmt.Errorf("missing value for %s", strings.Join(sets.List(missing), ", "))
		}
	}
	if sub == "" {
		return "", nil
	}
	// The API server refuses these in subPath and subPathExpr, but an
	// expansion can still make one.
	if path.IsAbs(sub) {
		return "", fmt.Errorf("error SubPath `%s` must not be an absolute path", sub)
	}
	for _, part := range strings.Split(sub, "/") {
		if part == ".." {
			return "", fmt.Errorf("unable to provision SubPath `%s`: must not contain '..'", sub)
		}
	}
	return sub, nil
}

// prepareSubPaths checks c's subPaths and makes each missing one a
// directory of its volume, on the node's disk. A tmpfs volume's
// directory is made by the runtime, which holds its files.
func (k *Kubelet) prepareSubPaths(pod *corev1.Pod, c corev1.Container, env []corev1.EnvVar) error {
	for _, m := range c.VolumeMounts {
		sub, err := subPathOf(m, env)
		if err != nil {
			return err
		}
		v, ok := volumeNamed(pod, m.Name)
		if sub == "" || !ok || volumemanager.IsMemory(v) || v.Image != nil || k.cfg.NodeRoot == "" { // an image's subPath is the runtime's
			continue
		}
		root := k.onDisk(volumemanager.Dir(pod.UID, v))
		dir := k.onDisk(path.Join(volumemanager.Dir(pod.UID, v), sub))
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
			k.log.Warn("could not make a subPath directory", "pod", client.KeyOf(pod), "container", c.Name, "volume", m.Name, "err", err)
			return fmt.Errorf("failed to create subPath directory for volumeMount %q of container %q", m.Name, c.Name)
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

// volumeNamed is the pod's volume called name.
func volumeNamed(pod *corev1.Pod, name string) (corev1.Volume, bool) {
	for _, v := range pod.Spec.Volumes {
		if v.Name == name {
			return v, true
		}
	}
	return corev1.Volume{}, false
}
