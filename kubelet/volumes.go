package kubelet

import (
	"context"
	"path"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/kubelet/clustertrustbundle"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
	kubetypes "github.com/mkube/mkube/kubelet/types"
	"github.com/mkube/mkube/kubelet/volumemanager"
)

// The kubelet's volumes, seed 003 §四 and §六–七, are set up on the
// node's disk by its volume manager (package volumemanager), before a
// pod's containers start; this file wires the manager to the Kubelet
// and turns each container's volumeMounts into CRI mounts of the
// volumes' directories, which the runtime binds into the container
// (cri/volumes.go). The node's disk is simulated: "/" of node N is
// NodeRoot/N on the real machine, shared by the kubelet and its runtime.

// newVolumeManager is the volume manager of k's node, which calls back
// into the Kubelet for what is the Kubelet's: its informers and managers
// (volumeSources), its $(VAR) expansion, image pulls, queue and status.
func newVolumeManager(k *Kubelet) *volumemanager.Manager {
	return volumemanager.NewManager(volumemanager.Options{Client: k.client, Recorder: k.recorder,
		NodeName: k.cfg.NodeName, NodeRoot: k.cfg.NodeRoot, NFSRoot: k.cfg.NFSRoot, Memory: k.cfg.Capacity.Memory(),
		Sources: volumeSources{k}, SubPath: subPathOf,
		EnsureImage: func(ctx context.Context, pod *corev1.Pod, c corev1.Container) (*corev1.ContainerStateWaiting, error) {
			_, w, err := k.ensureImage(ctx, pod, c)
			return w, err
		},
		Requeue: func(key string, after time.Duration) { k.queue.AddAfter(key, after) },
		ReportStatus: func(ctx context.Context, pod *corev1.Pod, sb *kubecontainer.PodSandbox) error {
			_, err := k.reportStatus(ctx, pod, sb, nil)
			return err
		},
		Clock: k.clock, Log: k.log})
}

// DefaultSyncFrequency is Kubernetes' --sync-frequency: how often the
// kubelet goes over every pod again, which is when a changed ConfigMap
// reaches the pods that mount it.
const DefaultSyncFrequency = time.Minute

// volumeMounts are c's CRI mounts: each volumeMount's volume directory,
// with its subPath (subpath.go, against the container's environment
// env), as the node names them. PrepareSubPaths has refused the
// subPaths that cannot be used; such a mount is left out here.
func volumeMounts(pod *corev1.Pod, c corev1.Container, env []corev1.EnvVar) []*runtimeapi.Mount {
	var out []*runtimeapi.Mount
	for _, m := range c.VolumeMounts {
		v, ok := volumemanager.VolumeNamed(pod, m.Name)
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
			if !kubetypes.PodFinished(pod) && (mountsChanged(pod, changed) || f.tokens.PodRenewalDue(pod) ||
				bundles && clustertrustbundle.MountsTrustBundles(pod) || f.podCertificates.RefreshDue(pod)) {
				f.route(pod) // package token: a token is renewed when 80% of its life has passed
			}
		}
	}
}
