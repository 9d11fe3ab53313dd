package volumemanager

import (
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/mkube/mkube/internal/mounttable"
)

// An emptyDir of medium Memory is a tmpfs, as Kubernetes' emptyDir
// plugin mounts it (setupTmpfs): its files are the node's memory, not
// its disk. The kubelet makes the mount point and records the mount in
// the node's mount table (package mounttable), whose line the runtime
// reads to keep the files itself, in memory (cri/tmpfs.go); the pod's
// directory is then empty on the disk, and the volume is unmounted when
// the pod's volumes are torn down.

// IsMemory: v is an emptyDir of medium Memory.
func IsMemory(v corev1.Volume) bool {
	return v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumMemory
}

// emptyDirPerm is the mode of an emptyDir's directory, Kubernetes' perm:
// anyone may write in it, whatever user the pod's containers run as.
const emptyDirPerm os.FileMode = 0o777

// SetUpEmptyDir makes an emptyDir's directory drwxrwxrwx, as Kubernetes'
// setupDir: mkdir is cut by the kubelet's umask (022 makes it 0755), so
// the mode is then set with chmod.
func SetUpEmptyDir(dir string) error {
	if err := os.MkdirAll(dir, emptyDirPerm); err != nil {
		return err
	}
	return os.Chmod(dir, emptyDirPerm)
}

// SetUpMemoryEmptyDir mounts the tmpfs of volume v at dir, its mount
// point on the disk of the node whose "/" is root (made as a disk
// emptyDir first, as setupTmpfs does; the tmpfs' own root, which the
// container sees, is the runtime's), of memoryVolumeSize.
func SetUpMemoryEmptyDir(root, dir string, pod *corev1.Pod, v corev1.Volume, allocatable *resource.Quantity) error {
	if err := SetUpEmptyDir(dir); err != nil {
		return err
	}
	size := memoryVolumeSize(pod, v, allocatable)
	return mounttable.Add(root, mounttable.Mount{Source: "tmpfs", Point: Dir(pod.UID, v), Type: "tmpfs", Size: size.Value()})
}

// UnmountPod unmounts the pod's tmpfs volumes from the node whose "/" is root.
func UnmountPod(root string, uid types.UID) error {
	return mounttable.RemoveUnder(root, PodDir(uid))
}

// memoryVolumeSize is the tmpfs' size= (Kubernetes' SizeMemoryBackedVolumes,
// calculateEmptyDirMemorySize): the node's allocatable memory, or less,
// the pod's memory limit if it has one (every container sets a memory
// limit), or less again, the volume's sizeLimit. So the pod cannot hold
// more in it than it may hold in memory at all.
//
//	sizeLimit 64Mi, containers limited to 128Mi on an 8Gi node = 64Mi
//	no sizeLimit, containers limited to 128Mi                   = 128Mi
//	no sizeLimit, no memory limit                               = 8Gi
func memoryVolumeSize(pod *corev1.Pod, v corev1.Volume, allocatable *resource.Quantity) resource.Quantity {
	size := allocatable.DeepCopy()
	if limit, ok := podMemoryLimit(pod); ok && limit.Sign() > 0 && limit.Cmp(size) <= 0 {
		size = limit
	}
	if s := v.EmptyDir.SizeLimit; s != nil && s.Sign() > 0 && s.Cmp(size) <= 0 {
		size = s.DeepCopy()
	}
	return size
}

// podMemoryLimit is the limit of the pod's memory cgroup (kubelet's
// ResourceConfigForPod): the sum of its containers' limits (the largest
// init container's, if larger), which it has only if every container
// declares one.
func podMemoryLimit(pod *corev1.Pod) (resource.Quantity, bool) {
	for _, c := range pod.Spec.Containers {
		if c.Resources.Limits.Memory().IsZero() {
			return resource.Quantity{}, false
		}
	}
	limit, ok := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})[corev1.ResourceMemory]
	return limit, ok
}
