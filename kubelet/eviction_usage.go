package kubelet

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/kubelet/volumemanager"
)

// What the eviction manager measures of a pod's local storage, as
// Kubernetes' stats summary gives it (volume stats, container rootfs and
// logs), in bytes of the files: Kubernetes counts disk blocks (du), which
// makes a 10-byte file 4 KiB; bytes keep a learner's arithmetic exact.

// storageUsage is a pod's local storage use, in bytes.
type storageUsage struct {
	// volumes are its local ephemeral volumes (Kubernetes'
	// IsLocalEphemeralVolume: an emptyDir on the disk, a configMap), by
	// name.
	volumes map[string]int64
	// containers are its running containers' writable layers and logs,
	// by name.
	containers map[string]int64
}

// total is what the pod uses in all: Kubernetes' pod ephemeral storage,
// its containers and its local ephemeral volumes.
func (u storageUsage) total() int64 {
	var n int64
	for _, b := range u.volumes {
		n += b
	}
	for _, b := range u.containers {
		n += b
	}
	return n
}

// localEphemeral: v's files are on the node's disk and go with the pod.
func localEphemeral(v corev1.Volume) bool {
	return (v.EmptyDir != nil && !volumemanager.IsMemory(v)) || v.ConfigMap != nil
}

// localStorageUsage measures pod: its volumes on the node's disk, and,
// if it has ephemeral-storage limits to check them against, its running
// containers' writable layers (the runtime's ContainerStats) and log
// directories.
func (k *Kubelet) localStorageUsage(ctx context.Context, pod *corev1.Pod) (storageUsage, error) {
	u := storageUsage{volumes: map[string]int64{}, containers: map[string]int64{}}
	if k.cfg.NodeRoot != "" {
		for _, v := range pod.Spec.Volumes {
			if localEphemeral(v) {
				u.volumes[v.Name] = dirBytes(k.onDisk(volumemanager.Dir(pod.UID, v)))
			}
		}
	}
	if !hasEphemeralStorageLimit(pod) {
		return u, nil
	}
	resp, err := k.runtime.runtime.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{Filter: &runtimeapi.ContainerStatsFilter{
		LabelSelector: map[string]string{labelPodUID: string(pod.UID), labelNodeName: k.cfg.NodeName}}})
	if err != nil {
		return u, fmt.Errorf("list container stats: %w", err)
	}
	logs := podLogDirectory(k.cfg.PodLogsDir, pod)
	for _, st := range resp.GetStats() {
		name := st.GetAttributes().GetLabels()[labelContainerName]
		u.containers[name] = int64(st.GetWritableLayer().GetUsedBytes().GetValue()) + dirBytes(filepath.Join(logs, name))
	}
	return u, nil
}

// dirBytes is the size of the regular files below dir: du's walk, not
// following links (a configMap volume's keys are links to its ..data
// files, counted once there). A directory that is not there holds none.
func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return nil
		}
		if info, err := e.Info(); err == nil {
			n += info.Size()
		}
		return nil
	})
	return n
}
