package volumemanager

import (
	"context"
	"errors"
	"os"

	corev1 "k8s.io/api/core/v1"
)

// podNameSource is a kubelet that knows of the pod only its name, all a
// downward API volume of these tests shows.
type podNameSource struct{}

func (podNameSource) ConfigMap(context.Context, string, string) (*corev1.ConfigMap, error) {
	return nil, errors.New("no ConfigMaps here")
}

func (podNameSource) Secret(context.Context, string, string) (*corev1.Secret, error) {
	return nil, errors.New("no Secrets here")
}

func (podNameSource) ServiceAccountToken(context.Context, *corev1.Pod, *corev1.ServiceAccountTokenProjection) (string, error) {
	return "", errors.New("no tokens here")
}

func (podNameSource) TrustAnchors(*corev1.ClusterTrustBundleProjection) ([]byte, error) {
	return nil, errors.New("no trust bundles here")
}

func (podNameSource) PodCertificateFiles(context.Context, *corev1.Pod, string, int, *corev1.PodCertificateProjection, os.FileMode, map[string]File) error {
	return errors.New("no pod certificates here")
}

func (podNameSource) PodField(pod *corev1.Pod, fieldPath string) (string, error) {
	if fieldPath != "metadata.name" {
		return "", errors.New("field label not supported: " + fieldPath)
	}
	return pod.Name, nil
}

func (podNameSource) ResourceField(*corev1.Pod, *corev1.ResourceFieldSelector) (string, error) {
	return "", errors.New("no resources here")
}

// plainSubPath is a mount's subPath, without subPathExpr's expansion
// (package kubelet's subPathOf).
func plainSubPath(m corev1.VolumeMount, _ []corev1.EnvVar) (string, error) { return m.SubPath, nil }

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
