package kubelet

import (
	"context"
	"fmt"
	"os"
	"strings"

	kubetypes "github.com/mkube/mkube/kubelet/types"
	"github.com/mkube/mkube/kubelet/volumemanager"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// What a configMap, secret, downwardAPI or projected volume holds: its
// payload, file by file, as the kubelet's volume plugins make it
// (MakePayload): every key of the object, or only the listed items at
// their paths, with defaultMode (0644) or the item's own mode; a
// projected serviceAccountToken source, a token bound to the pod; a
// clusterTrustBundle source, PEM trust anchors (package clustertrustbundle);
// a podCertificate source, the pod's own key and certificate chain
// (podcertificates.go).

// defaultVolumeMode is Kubernetes' defaultMode of these volumes.
const defaultVolumeMode = 0o644

func (k *Kubelet) volumePayload(ctx context.Context, pod *corev1.Pod, v corev1.Volume) (map[string]volumemanager.File, error) {
	out := map[string]volumemanager.File{}
	switch s := v.VolumeSource; {
	case s.ConfigMap != nil:
		return out, k.configMapFiles(ctx, pod, s.ConfigMap.Name, s.ConfigMap.Items, s.ConfigMap.Optional, modeOr(s.ConfigMap.DefaultMode), out)
	case s.Secret != nil:
		return out, k.secretFiles(ctx, pod, s.Secret.SecretName, s.Secret.Items, s.Secret.Optional, modeOr(s.Secret.DefaultMode), out)
	case s.DownwardAPI != nil:
		return out, k.downwardAPIFiles(pod, s.DownwardAPI.Items, modeOr(s.DownwardAPI.DefaultMode), out)
	case s.Projected != nil:
		mode := modeOr(s.Projected.DefaultMode)
		for i, src := range s.Projected.Sources {
			var err error
			switch {
			case src.ConfigMap != nil:
				err = k.configMapFiles(ctx, pod, src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional, mode, out)
			case src.Secret != nil:
				err = k.secretFiles(ctx, pod, src.Secret.Name, src.Secret.Items, src.Secret.Optional, mode, out)
			case src.DownwardAPI != nil:
				err = k.downwardAPIFiles(pod, src.DownwardAPI.Items, mode, out)
			case src.ServiceAccountToken != nil:
				// A token the API server issued for this pod (package token).
				var token string
				if token, err = k.fleet.tokens.PodToken(ctx, pod, src.ServiceAccountToken); err == nil {
					out[src.ServiceAccountToken.Path] = volumemanager.File{Data: []byte(token), Mode: mode}
				}
			case src.ClusterTrustBundle != nil: // package clustertrustbundle
				var anchors []byte
				if anchors, err = k.fleet.trustBundles.Anchors(src.ClusterTrustBundle); err == nil {
					out[src.ClusterTrustBundle.Path] = volumemanager.File{Data: anchors, Mode: mode}
				}
			case src.PodCertificate != nil: // podcertificates.go
				err = k.podCertificateFiles(ctx, pod, v.Name, i, src.PodCertificate, mode, out)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func modeOr(m *int32) os.FileMode {
	if m == nil {
		return defaultVolumeMode
	}
	return os.FileMode(*m)
}

// configMapFiles adds the ConfigMap's keys (data and binaryData) to out.
func (k *Kubelet) configMapFiles(ctx context.Context, pod *corev1.Pod, name string, items []corev1.KeyToPath, optional *bool, mode os.FileMode, out map[string]volumemanager.File) error {
	cm, err := k.configMap(ctx, pod.Namespace, name)
	if err != nil {
		if isOptional(optional) && apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	data := map[string][]byte{}
	for key, v := range cm.Data {
		data[key] = []byte(v)
	}
	for key, v := range cm.BinaryData {
		data[key] = v
	}
	return addKeys(data, items, isOptional(optional), mode, out, "configmap references non-existent config key: %s")
}

// secretFiles adds the Secret's keys, decoded, to out.
func (k *Kubelet) secretFiles(ctx context.Context, pod *corev1.Pod, name string, items []corev1.KeyToPath, optional *bool, mode os.FileMode, out map[string]volumemanager.File) error {
	s, err := k.secret(ctx, pod.Namespace, name)
	if err != nil {
		if isOptional(optional) && apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	data := map[string][]byte{}
	for key, v := range s.Data {
		data[key] = v
	}
	for key, v := range s.StringData { // never stored, but harmless
		data[key] = []byte(v)
	}
	return addKeys(data, items, isOptional(optional), mode, out, "references non-existent secret key: %s")
}

// addKeys adds every key of data, or the items', to out.
func addKeys(data map[string][]byte, items []corev1.KeyToPath, optional bool, mode os.FileMode, out map[string]volumemanager.File, missing string) error {
	if len(items) == 0 {
		for _, key := range sortedKeys(data) {
			out[key] = volumemanager.File{Data: data[key], Mode: mode}
		}
		return nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if optional {
				continue
			}
			return fmt.Errorf(missing, it.Key)
		}
		if err := volumemanager.ValidPayloadPath(it.Path); err != nil {
			return err
		}
		m := mode
		if it.Mode != nil {
			m = os.FileMode(*it.Mode)
		}
		out[it.Path] = volumemanager.File{Data: v, Mode: m}
	}
	return nil
}

// downwardAPIFiles adds the pod's fields the items name to out: labels
// and annotations whole, one `key="value"` per line, as Kubernetes
// formats them.
func (k *Kubelet) downwardAPIFiles(pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile, mode os.FileMode, out map[string]volumemanager.File) error {
	for _, it := range items {
		if err := volumemanager.ValidPayloadPath(it.Path); err != nil {
			return err
		}
		var value string
		var err error
		switch {
		case it.FieldRef != nil && it.FieldRef.FieldPath == "metadata.labels":
			value = formatMap(pod.Labels)
		case it.FieldRef != nil && it.FieldRef.FieldPath == "metadata.annotations":
			value = formatMap(pod.Annotations)
		case it.FieldRef != nil:
			value, err = podField(pod, it.FieldRef.FieldPath, k.cfg.NodeIP.String(), pod.Status.PodIP)
		case it.ResourceFieldRef != nil:
			c, ok := containerNamed(pod, it.ResourceFieldRef.ContainerName)
			if !ok {
				return fmt.Errorf("container %s not found", it.ResourceFieldRef.ContainerName)
			}
			value, err = resourceField(pod, c, it.ResourceFieldRef, k.cfg.Capacity)
		}
		if err != nil {
			return err
		}
		m := mode
		if it.Mode != nil {
			m = os.FileMode(*it.Mode)
		}
		out[it.Path] = volumemanager.File{Data: []byte(value), Mode: m}
	}
	return nil
}

// formatMap is labels or annotations as a downward API file has them.
func formatMap(m map[string]string) string {
	var lines []string
	for _, key := range sortedKeys(m) {
		lines = append(lines, fmt.Sprintf("%s=%q", key, m[key]))
	}
	return strings.Join(lines, "\n")
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
