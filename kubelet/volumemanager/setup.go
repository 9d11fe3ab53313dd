package volumemanager

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/client"
)

// The kubelet's volume manager, seed 003 §四 and §六–七: before a pod's
// containers start, each of its volumes is set up on the node's disk,
// under the pod's directory
//
//	/var/lib/kubelet/pods/<uid>/volumes/kubernetes.io~<plugin>/<volume>
//
// and each container's volumeMounts become CRI mounts of those
// directories, which the runtime binds into the container (cri/volumes.go).
// The node's disk is simulated: "/" of node N is NodeRoot/N on the real
// machine, shared by the kubelet and its runtime.
//
//   - emptyDir: an empty directory, shared by the pod's containers, kept
//     across their restarts, removed with the pod; of medium Memory, a
//     tmpfs (emptydir.go); its sizeLimit is watched by the eviction
//     manager (package eviction);
//   - hostPath: the node's own directory (NodeRoot/N/<path>), shared by
//     the pods of the node and kept after them;
//   - configMap, secret, downwardAPI, projected: the object's keys as
//     files, written atomically (atomicwriter.go) and refreshed every
//     SyncFrequency, so that an updated ConfigMap reaches the files, but
//     not a subPath mount, and never an environment variable;
//   - nfs: a directory shared by every pod of every node that mounts the
//     same server and path (NFSRoot/<server>/<path>);
//   - persistentVolumeClaim: the claim's volume, hostPath, local or nfs,
//     once the claim is bound and the volume is free to attach to this
//     node (claims.go).

// mountError is a volume that could not be set up, worded as the
// kubelet's FailedMount events: `MountVolume.SetUp failed for volume
// "config" : configmap "x" not found`. op is the operation that failed,
// SetUp if empty.
type mountError struct {
	volume string
	op     string
	err    error
}

func (e *mountError) Error() string {
	op := e.op
	if op == "" {
		op = "SetUp"
	}
	return fmt.Sprintf("MountVolume.%s failed for volume %q : %v", op, e.volume, e.err)
}

func (*mountError) reason() string { return "FailedMount" }

// volumeError is a volume the pod must wait for: its event's reason
// (FailedMount, FailedAttachVolume) and message.
type volumeError interface {
	error
	reason() string
}

// setUpVolumes sets up (or refreshes) the volumes of pod on the node. It
// is cheap to call again: what is there already is left alone, and a
// payload only rewritten when it changed.
func (m *Manager) setUpVolumes(ctx context.Context, pod *corev1.Pod) error {
	if m.opts.NodeRoot == "" || len(pod.Spec.Volumes) == 0 {
		return nil
	}
	if err := m.setUpClaims(ctx, pod); err != nil {
		return err
	}
	for _, v := range pod.Spec.Volumes {
		dir := m.OnDisk(Dir(pod.UID, v))
		var err error
		switch s := v.VolumeSource; {
		case s.HostPath != nil:
			err = setUpHostPath(dir, s.HostPath)
		case s.NFS != nil:
			err = m.setUpNFS(dir, s.NFS)
		case s.PersistentVolumeClaim != nil:
			continue // setUpClaims's (claims.go)
		case s.Image != nil:
			continue // nothing on the node's disk: the runtime mounts the image (imagevolumes.go)
		case IsMemory(v):
			err = SetUpMemoryEmptyDir(m.OnDisk("/"), dir, pod, v, m.opts.Memory)
		case s.ConfigMap != nil || s.Secret != nil || s.DownwardAPI != nil || s.Projected != nil:
			// Kubernetes wraps these in an emptyDir: their directory is
			// one, drwxrwxrwx, which the payload's links fill.
			var payload map[string]File
			if payload, err = m.volumePayload(ctx, pod, v); err == nil {
				err = SetUpEmptyDir(dir)
			}
			if err == nil {
				var changed bool
				if changed, err = WriteAtomically(dir, payload, m.opts.Clock.Now()); changed && err == nil {
					m.opts.Log.Info("volume written", "pod", client.KeyOf(pod), "volume", v.Name, "plugin", Plugin(v), "files", len(payload))
				}
			}
		default: // emptyDir, and whatever else: an empty directory
			err = SetUpEmptyDir(dir) // emptydir.go
		}
		if err != nil {
			return &mountError{volume: v.Name, err: err}
		}
	}
	return nil
}

// setUpHostPath checks (or makes) a hostPath volume by its type.
func setUpHostPath(dir string, h *corev1.HostPathVolumeSource) error {
	typ := corev1.HostPathUnset
	if h.Type != nil {
		typ = *h.Type
	}
	fi, err := os.Stat(dir)
	exists := err == nil
	switch typ {
	case corev1.HostPathDirectoryOrCreate:
		return os.MkdirAll(dir, 0o755)
	case corev1.HostPathFileOrCreate:
		if exists {
			return nil
		}
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dir, nil, 0o644)
	case corev1.HostPathDirectory:
		if !exists || !fi.IsDir() {
			return fmt.Errorf("hostPath type check failed: %s is not a directory", h.Path)
		}
	case corev1.HostPathFile:
		if !exists || fi.IsDir() {
			return fmt.Errorf("hostPath type check failed: %s is not a file", h.Path)
		}
	case corev1.HostPathUnset:
		// No check, as Kubernetes; but the bind mount needs the directory,
		// which Docker created too.
		if !exists {
			return os.MkdirAll(dir, 0o755)
		}
	default:
		if !exists {
			return fmt.Errorf("hostPath type check failed: %s is not a %s", h.Path, typ)
		}
	}
	return nil
}

// setUpNFS "mounts" the export: a link from the pod's volume directory
// to the export's directory, which every node's kubelet and runtime see.
func (m *Manager) setUpNFS(dir string, n *corev1.NFSVolumeSource) error {
	export, err := m.nfsExport(n)
	if err != nil {
		return err
	}
	return linkVolume(dir, export)
}
