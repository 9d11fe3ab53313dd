package kubelet

import (
	"context"

	"github.com/mkube/mkube/client"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Image volumes (Kubernetes 1.33's ImageVolume, on by default since
// 1.35): a volume whose source is an image (an OCI image or artifact),
// which the kubelet pulls as it pulls a container's image, by the
// volume's pullPolicy, and the runtime mounts read-only at each of the
// container's volumeMounts of it (cri/imagevolumes.go). A subPath shows
// one directory of the image. The volume manager has the images pulled
// (volumemanager.Manager's EnsureVolumeImages, through ensureImage).

// ensureImage has the image manager (package images) make c's image
// present, and syncs the pod again when it says to (a pull that failed,
// after its back-off).
func (k *Kubelet) ensureImage(ctx context.Context, pod *corev1.Pod, c corev1.Container) (string, *corev1.ContainerStateWaiting, error) {
	ref, w, requeueAfter, err := k.images.EnsureImage(ctx, pod, c, k.runtimeManager.Configs.SandboxConfig(pod, 0))
	if requeueAfter > 0 {
		k.queue.AddAfter(client.KeyOf(pod), requeueAfter)
	}
	return ref, w, err
}

// imageMount is the CRI mount of image volume src at m's path: the
// image, read-only whatever the mount says, and the subPath within it.
func imageMount(m corev1.VolumeMount, src *corev1.ImageVolumeSource, sub string) *runtimeapi.Mount {
	return &runtimeapi.Mount{ContainerPath: m.MountPath, Readonly: true, ImageSubPath: sub,
		Image: &runtimeapi.ImageSpec{Image: src.Reference, UserSpecifiedImage: src.Reference}}
}
