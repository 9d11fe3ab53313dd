package kubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/seedstep"
	"github.com/mkube/mkube/kubelet/clustertrustbundle"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
	"github.com/mkube/mkube/kubelet/volumemanager"
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
//     tmpfs (kubelet/volumemanager); its sizeLimit is watched by the eviction
//     manager (eviction.go);
//   - hostPath: the node's own directory (NodeRoot/N/<path>), shared by
//     the pods of the node and kept after them;
//   - configMap, secret, downwardAPI, projected: the object's keys as
//     files, written atomically (kubelet/volumemanager) and refreshed every
//     SyncFrequency, so that an updated ConfigMap reaches the files, but
//     not a subPath mount, and never an environment variable;
//   - nfs: a directory shared by every pod of every node that mounts the
//     same server and path (NFSRoot/<server>/<path>);
//   - persistentVolumeClaim: the claim's volume, hostPath, local or nfs,
//     once the claim is bound and the volume is free to attach to this
//     node (volumes_claims.go).

// onDisk is where a node path is on the real machine.
func (k *Kubelet) onDisk(nodePath string) string {
	return filepath.Join(k.cfg.NodeRoot, k.cfg.NodeName, filepath.FromSlash(nodePath))
}

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
func (k *Kubelet) setUpVolumes(ctx context.Context, pod *corev1.Pod) error {
	if k.cfg.NodeRoot == "" || len(pod.Spec.Volumes) == 0 {
		return nil
	}
	if err := k.setUpClaims(ctx, pod); err != nil {
		return err
	}
	for _, v := range pod.Spec.Volumes {
		dir := k.onDisk(volumemanager.Dir(pod.UID, v))
		var err error
		switch s := v.VolumeSource; {
		case s.HostPath != nil:
			err = setUpHostPath(dir, s.HostPath)
		case s.NFS != nil:
			err = k.setUpNFS(dir, s.NFS)
		case s.PersistentVolumeClaim != nil:
			continue // setUpClaims's (volumes_claims.go)
		case s.Image != nil:
			continue // nothing on the node's disk: the runtime mounts the image (imagevolumes.go)
		case volumemanager.IsMemory(v):
			err = volumemanager.SetUpMemoryEmptyDir(k.onDisk("/"), dir, pod, v, k.cfg.Capacity.Memory())
		case s.ConfigMap != nil || s.Secret != nil || s.DownwardAPI != nil || s.Projected != nil:
			// Kubernetes wraps these in an emptyDir: their directory is
			// one, drwxrwxrwx, which the payload's links fill.
			var payload map[string]volumemanager.File
			if payload, err = k.volumePayload(ctx, pod, v); err == nil {
				err = volumemanager.SetUpEmptyDir(dir)
			}
			if err == nil {
				var changed bool
				if changed, err = volumemanager.WriteAtomically(dir, payload, k.clock.Now()); changed && err == nil {
					k.log.Info("volume written", "pod", client.KeyOf(pod), "volume", v.Name, "plugin", volumemanager.Plugin(v), "files", len(payload))
				}
			}
		default: // emptyDir, and whatever else: an empty directory
			err = volumemanager.SetUpEmptyDir(dir) // kubelet/volumemanager
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
func (k *Kubelet) setUpNFS(dir string, n *corev1.NFSVolumeSource) error {
	export, err := k.nfsExport(n)
	if err != nil {
		return err
	}
	return linkVolume(dir, export)
}

// DefaultSyncFrequency is Kubernetes' --sync-frequency: how often the
// kubelet goes over every pod again, which is when a changed ConfigMap
// reaches the pods that mount it.
const DefaultSyncFrequency = time.Minute

// mountRetry is how soon a pod whose volumes could not be set up is
// synced again (the volume manager retries with a back-off from 500 ms;
// a few seconds is what a learner waits for a ConfigMap they create).
const mountRetry = 2 * time.Second

// mountVolumes is runPod's volume step: the pod's containers start only
// once its volumes are set up. Until then it reports ContainerCreating,
// records FailedMount and tries again. Later, a volume that cannot be
// refreshed (its ConfigMap deleted) keeps its last content, as in
// Kubernetes, and the containers run on.
func (k *Kubelet) mountVolumes(ctx context.Context, pod *corev1.Pod, sb *kubecontainer.PodSandbox) (bool, error) {
	err := k.setUpVolumes(ctx, pod)
	mounted := k.volumes.SetUp(pod.UID, err == nil)
	if err == nil {
		return true, nil
	}
	var ve volumeError
	if !errors.As(err, &ve) {
		return mounted, err
	}
	var attach *attachError
	if !errors.As(err, &attach) { // a Multi-Attach error has its own event, recorded once
		k.recorder.Event(pod, corev1.EventTypeWarning, ve.reason(), "%v", err)
	}
	key := client.KeyOf(pod)
	if mounted {
		k.log.Warn("could not refresh a volume: it keeps its last content", "pod", key, "err", err)
		return true, nil
	}
	k.log.Warn("cannot start the pod's containers yet: a volume cannot be set up", seedstep.Key, seedstep.KubeletStartsPod,
		"pod", key, "err", err, "retryIn", mountRetry)
	k.queue.AddAfter(key, mountRetry)
	_, rerr := k.reportStatus(ctx, pod, sb, nil)
	return false, rerr
}

// tearDownVolumes removes the pod's directory with its volumes (not its
// hostPath and nfs ones, which are not in it): the pod is gone.
func (k *Kubelet) tearDownVolumes(uid types.UID) {
	if k.cfg.NodeRoot == "" {
		return
	}
	k.volumes.Forget(uid)
	if err := volumemanager.UnmountPod(k.onDisk("/"), uid); err != nil {
		k.log.Warn("could not unmount the pod's tmpfs volumes", "uid", uid, "err", err)
	}
	if err := os.RemoveAll(k.onDisk(volumemanager.PodDir(uid))); err != nil {
		k.log.Warn("could not remove the pod's volumes", "uid", uid, "err", err)
	}
}

// volumeMounts are c's CRI mounts: each volumeMount's volume directory,
// with its subPath (subpath.go, against the container's environment
// env), as the node names them. prepareSubPaths has refused the
// subPaths that cannot be used; such a mount is left out here.
func volumeMounts(pod *corev1.Pod, c corev1.Container, env []corev1.EnvVar) []*runtimeapi.Mount {
	var out []*runtimeapi.Mount
	for _, m := range c.VolumeMounts {
		v, ok := volumeNamed(pod, m.Name)
		sub, err := subPathOf(m, env)
		if !ok || err != nil {
			continue
		}
		// ConfigMaps, Secrets, the downward API and projections are
		// read-only whatever the mount says (Kubernetes mounts them so);
		// an nfs volume or a claim is if its source says readOnly.
		ro := m.ReadOnly || v.ConfigMap != nil || v.Secret != nil || v.DownwardAPI != nil || v.Projected != nil ||
			v.NFS != nil && v.NFS.ReadOnly || v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ReadOnly
		if v.Image != nil {
			out = append(out, imageMount(m, v.Image, sub)) // imagevolumes.go
			continue
		}
		out = append(out, &runtimeapi.Mount{ContainerPath: m.MountPath, HostPath: path.Join(volumemanager.Dir(pod.UID, v), sub), Readonly: ro})
	}
	return out
}

// sortedKeys are m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// resyncVolumes syncs, every SyncFrequency, each pod that mounts a
// ConfigMap or Secret changed since the last time, so that its files
// follow the object within the sync period, as the kubelet's periodic
// pod sync brings them. (A change of the pod's own labels or
// annotations, which a downward API volume shows, syncs it anyway.)
func (f *Fleet) resyncVolumes(ctx context.Context) {
	t := f.clock.NewTicker(f.cfg.SyncFrequency)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		changed := f.takeChanged()
		f.tokens.ForgetExpired()
		bundles := f.trustBundles.TakeChanged()
		if len(changed) == 0 && f.tokens.Empty() && !bundles && f.podCertificates.Empty() {
			continue
		}
		for _, obj := range f.informer.Cache().List() {
			pod := obj.(*corev1.Pod)
			if !podFinished(pod) && (mountsChanged(pod, changed) || f.tokens.PodRenewalDue(pod) ||
				bundles && clustertrustbundle.MountsTrustBundles(pod) || f.podCertificates.RefreshDue(pod)) {
				f.route(pod) // package token: a token is renewed when 80% of its life has passed
			}
		}
	}
}
