package kubelet

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"

	kubetypes "github.com/mkube/mkube/kubelet/types"
	"github.com/mkube/mkube/kubelet/volumemanager"
)

// volumeSources is where the volume manager (package volumemanager)
// reads what configMap, secret, downwardAPI and projected volumes hold:
// the Kubelet's objects (objects.go), the fleet's token and trust bundle
// managers, its pod certificates (package podcertificate, as this node:
// kubelet.go), and the downward API's values as containers'
// environments get them (downwardapi.go).
type volumeSources struct{ k *Kubelet }

func (s volumeSources) ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	return s.k.configMap(ctx, namespace, name)
}

func (s volumeSources) Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	return s.k.secret(ctx, namespace, name)
}

func (s volumeSources) ServiceAccountToken(ctx context.Context, pod *corev1.Pod, src *corev1.ServiceAccountTokenProjection) (string, error) {
	return s.k.fleet.tokens.PodToken(ctx, pod, src)
}

func (s volumeSources) TrustAnchors(src *corev1.ClusterTrustBundleProjection) ([]byte, error) {
	return s.k.fleet.trustBundles.Anchors(src)
}

func (s volumeSources) PodCertificateFiles(ctx context.Context, pod *corev1.Pod, volume string, index int, src *corev1.PodCertificateProjection,
	mode os.FileMode, out map[string]volumemanager.File) error {
	return s.k.podCertificateFiles(ctx, pod, volume, index, src, mode, out)
}

// PodField is a fieldRef's value, with the node's IP and the pod's.
func (s volumeSources) PodField(pod *corev1.Pod, fieldPath string) (string, error) {
	return podField(pod, fieldPath, s.k.cfg.NodeIP.String(), pod.Status.PodIP)
}

// ResourceField is a resourceFieldRef's value, of the container it
// names (which a volume's must), against the node's capacity.
func (s volumeSources) ResourceField(pod *corev1.Pod, sel *corev1.ResourceFieldSelector) (string, error) {
	c, ok := containerNamed(pod, sel.ContainerName)
	if !ok {
		return "", fmt.Errorf("container %s not found", sel.ContainerName)
	}
	return resourceField(pod, c, sel, s.k.cfg.Capacity)
}

// containerNamed is the pod's container called name.
func containerNamed(pod *corev1.Pod, name string) (corev1.Container, bool) {
	for _, c := range kubetypes.AllContainers(pod) {
		if c.Name == name {
			return c, true
		}
	}
	return corev1.Container{}, false
}
