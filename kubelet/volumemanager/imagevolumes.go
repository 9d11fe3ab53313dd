package volumemanager

import (
	"context"

	corev1 "k8s.io/api/core/v1"
)

// Image volumes (Kubernetes 1.33's ImageVolume, on by default since
// 1.35): a volume whose source is an image (an OCI image or artifact),
// which the kubelet pulls as it pulls a container's image, by the
// volume's pullPolicy, and the runtime mounts read-only at each of the
// container's volumeMounts of it (cri/imagevolumes.go). A subPath shows
// one directory of the image.

// EnsureVolumeImages pulls the images of the image volumes c mounts, as
// the kubelet pulls c's own image (Options' EnsureImage: Pulling,
// Pulled, ErrImagePull and its back-off, under c's name): c waits until
// they are on the node.
func (m *Manager) EnsureVolumeImages(ctx context.Context, pod *corev1.Pod, c corev1.Container) (*corev1.ContainerStateWaiting, error) {
	for _, vm := range c.VolumeMounts {
		v, ok := VolumeNamed(pod, vm.Name)
		if !ok || v.Image == nil {
			continue
		}
		pull := corev1.Container{Name: c.Name, Image: v.Image.Reference, ImagePullPolicy: v.Image.PullPolicy}
		if w, err := m.opts.EnsureImage(ctx, pod, pull); w != nil || err != nil {
			return w, err
		}
	}
	return nil, nil
}
