package eviction

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

// Usage is a pod's local storage use, in bytes.
type Usage struct {
	// Volumes are its local ephemeral volumes (Kubernetes'
	// IsLocalEphemeralVolume: an emptyDir on the disk, a configMap), by
	// name.
	Volumes map[string]int64
	// Containers are its running containers' writable layers and logs,
	// by name.
	Containers map[string]int64
}

// total is what the pod uses in all: Kubernetes' pod ephemeral storage,
// its containers and its local ephemeral volumes.
func (u Usage) total() int64 {
	var n int64
	for _, b := range u.Volumes {
		n += b
	}
	for _, b := range u.Containers {
		n += b
	}
	return n
}

// localEphemeral: v's files are on the node's disk and go with the pod.
func localEphemeral(v corev1.Volume) bool {
	return (v.EmptyDir != nil && !volumemanager.IsMemory(v)) || v.ConfigMap != nil
}

// LocalStorageUsage measures pod: its volumes on the node's disk, and,
// if it has ephemeral-storage limits to check them against, its running
// containers' writable layers (the runtime's ContainerStats) and log
// directories.
func (m *Manager) LocalStorageUsage(ctx context.Context, pod *corev1.Pod) (Usage, error) {
	u := Usage{Volumes: map[string]int64{}, Containers: map[string]int64{}}
	if m.o.OnDisk != nil {
		for _, v := range pod.Spec.Volumes {
			if localEphemeral(v) {
				u.Volumes[v.Name] = dirBytes(m.o.OnDisk(volumemanager.Dir(pod.UID, v)))
			}
		}
	}
	if !hasEphemeralStorageLimit(pod) {
		return u, nil
	}
	resp, err := m.o.Runtime.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{Filter: &runtimeapi.ContainerStatsFilter{
		LabelSelector: m.o.Selector(pod)}})
	if err != nil {
		return u, fmt.Errorf("list container stats: %w", err)
	}
	logs := m.o.LogDir(pod)
	for _, st := range resp.GetStats() {
		name := st.GetAttributes().GetLabels()[m.o.ContainerLabel]
		u.Containers[name] = int64(st.GetWritableLayer().GetUsedBytes().GetValue()) + dirBytes(filepath.Join(logs, name))
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
