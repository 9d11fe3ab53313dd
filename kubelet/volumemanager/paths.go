package volumemanager

import (
	"path"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Where a pod's volumes are on the node, as the node names them:
//
//	/var/lib/kubelet/pods/<uid>/volumes/kubernetes.io~<plugin>/<volume>

// PodDir is the pod's directory on the node, node-absolute.
func PodDir(uid types.UID) string { return path.Join("/var/lib/kubelet/pods", string(uid)) }

// Plugin is the plugin directory name of a volume's kind.
func Plugin(v corev1.Volume) string {
	switch s := v.VolumeSource; {
	case s.HostPath != nil:
		return "host-path"
	case s.ConfigMap != nil:
		return "configmap"
	case s.Secret != nil:
		return "secret"
	case s.DownwardAPI != nil:
		return "downward-api"
	case s.Projected != nil:
		return "projected"
	case s.NFS != nil:
		return "nfs"
	case s.PersistentVolumeClaim != nil:
		return "csi"
	case s.Image != nil:
		return "image"
	}
	return "empty-dir"
}

// Dir is where the kubelet sets up volume v of the pod, as the node
// names it; a hostPath volume is its own path.
func Dir(uid types.UID, v corev1.Volume) string {
	if v.HostPath != nil {
		return path.Clean("/" + v.HostPath.Path)
	}
	return path.Join(PodDir(uid), "volumes", "kubernetes.io~"+Plugin(v), v.Name)
}

// VolumeNamed is the pod's volume called name.
func VolumeNamed(pod *corev1.Pod, name string) (corev1.Volume, bool) {
	for _, v := range pod.Spec.Volumes {
		if v.Name == name {
			return v, true
		}
	}
	return corev1.Volume{}, false
}

// OnDisk is where nodePath of node is on the real machine, whose nodes'
// disks are under root.
func OnDisk(root, node, nodePath string) string {
	return filepath.Join(root, node, filepath.FromSlash(nodePath))
}
