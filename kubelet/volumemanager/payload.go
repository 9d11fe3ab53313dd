package volumemanager

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
)

// What a configMap, secret, downwardAPI or projected volume holds: its
// payload, file by file, as the kubelet's volume plugins make it
// (MakePayload): every key of the object, or only the listed items at
// their paths, with defaultMode (0644) or the item's own mode; a
// projected serviceAccountToken source, a token bound to the pod; a
// clusterTrustBundle source, PEM trust anchors (package clustertrustbundle);
// a podCertificate source, the pod's own key and certificate chain
// (package podcertificate, through Sources).

// Sources are where the kubelet reads what these volumes hold: the
// objects from its informers or the API server, the tokens, trust
// anchors and pod certificates from its managers, the downward API's
// values from what it knows of the pod and its node.
type Sources interface {
	// ConfigMap and Secret are the object namespace/name; a NotFound
	// error is worded as the kubelet words it, `configmap "x" not found`.
	ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	// ServiceAccountToken is a token the API server issued for the pod
	// (package token).
	ServiceAccountToken(ctx context.Context, pod *corev1.Pod, src *corev1.ServiceAccountTokenProjection) (string, error)
	// TrustAnchors are a clusterTrustBundle source's PEM anchors
	// (package clustertrustbundle).
	TrustAnchors(src *corev1.ClusterTrustBundleProjection) ([]byte, error)
	// PodCertificateFiles adds the files of the pod's podCertificate
	// source (the volume's source number index) to out.
	PodCertificateFiles(ctx context.Context, pod *corev1.Pod, volume string, index int, src *corev1.PodCertificateProjection,
		mode os.FileMode, out map[string]File) error
	// PodField is a fieldRef's value: the pod's own field, or its IP
	// and its node's.
	PodField(pod *corev1.Pod, fieldPath string) (string, error)
	// ResourceField is a resourceFieldRef's value, a request or limit of
	// the container it names.
	ResourceField(pod *corev1.Pod, sel *corev1.ResourceFieldSelector) (string, error)
}

// defaultVolumeMode is Kubernetes' defaultMode of these volumes.
const defaultVolumeMode = 0o644

func (m *Manager) volumePayload(ctx context.Context, pod *corev1.Pod, v corev1.Volume) (map[string]File, error) {
	out := map[string]File{}
	switch s := v.VolumeSource; {
	case s.ConfigMap != nil:
		return out, m.configMapFiles(ctx, pod, s.ConfigMap.Name, s.ConfigMap.Items, s.ConfigMap.Optional, modeOr(s.ConfigMap.DefaultMode), out)
	case s.Secret != nil:
		return out, m.secretFiles(ctx, pod, s.Secret.SecretName, s.Secret.Items, s.Secret.Optional, modeOr(s.Secret.DefaultMode), out)
	case s.DownwardAPI != nil:
		return out, m.downwardAPIFiles(pod, s.DownwardAPI.Items, modeOr(s.DownwardAPI.DefaultMode), out)
	case s.Projected != nil:
		mode := modeOr(s.Projected.DefaultMode)
		for i, src := range s.Projected.Sources {
			var err error
			switch {
			case src.ConfigMap != nil:
				err = m.configMapFiles(ctx, pod, src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional, mode, out)
			case src.Secret != nil:
				err = m.secretFiles(ctx, pod, src.Secret.Name, src.Secret.Items, src.Secret.Optional, mode, out)
			case src.DownwardAPI != nil:
				err = m.downwardAPIFiles(pod, src.DownwardAPI.Items, mode, out)
			case src.ServiceAccountToken != nil:
				// A token the API server issued for this pod (package token).
				var token string
				if token, err = m.opts.Sources.ServiceAccountToken(ctx, pod, src.ServiceAccountToken); err == nil {
					out[src.ServiceAccountToken.Path] = File{Data: []byte(token), Mode: mode}
				}
			case src.ClusterTrustBundle != nil: // package clustertrustbundle
				var anchors []byte
				if anchors, err = m.opts.Sources.TrustAnchors(src.ClusterTrustBundle); err == nil {
					out[src.ClusterTrustBundle.Path] = File{Data: anchors, Mode: mode}
				}
			case src.PodCertificate != nil: // package podcertificate, through the kubelet
				err = m.opts.Sources.PodCertificateFiles(ctx, pod, v.Name, i, src.PodCertificate, mode, out)
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
func (m *Manager) configMapFiles(ctx context.Context, pod *corev1.Pod, name string, items []corev1.KeyToPath, optional *bool, mode os.FileMode, out map[string]File) error {
	cm, err := m.opts.Sources.ConfigMap(ctx, pod.Namespace, name)
	if err != nil {
		if ptr.Deref(optional, false) && apierrors.IsNotFound(err) {
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
	return addKeys(data, items, ptr.Deref(optional, false), mode, out, "configmap references non-existent config key: %s")
}

// secretFiles adds the Secret's keys, decoded, to out.
func (m *Manager) secretFiles(ctx context.Context, pod *corev1.Pod, name string, items []corev1.KeyToPath, optional *bool, mode os.FileMode, out map[string]File) error {
	s, err := m.opts.Sources.Secret(ctx, pod.Namespace, name)
	if err != nil {
		if ptr.Deref(optional, false) && apierrors.IsNotFound(err) {
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
	return addKeys(data, items, ptr.Deref(optional, false), mode, out, "references non-existent secret key: %s")
}

// addKeys adds every key of data, or the items', to out.
func addKeys(data map[string][]byte, items []corev1.KeyToPath, optional bool, mode os.FileMode, out map[string]File, missing string) error {
	if len(items) == 0 {
		for _, key := range sortedKeys(data) {
			out[key] = File{Data: data[key], Mode: mode}
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
		if err := ValidPayloadPath(it.Path); err != nil {
			return err
		}
		m := mode
		if it.Mode != nil {
			m = os.FileMode(*it.Mode)
		}
		out[it.Path] = File{Data: v, Mode: m}
	}
	return nil
}

// downwardAPIFiles adds the pod's fields the items name to out: labels
// and annotations whole, one `key="value"` per line, as Kubernetes
// formats them.
func (m *Manager) downwardAPIFiles(pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile, mode os.FileMode, out map[string]File) error {
	for _, it := range items {
		if err := ValidPayloadPath(it.Path); err != nil {
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
			value, err = m.opts.Sources.PodField(pod, it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil:
			value, err = m.opts.Sources.ResourceField(pod, it.ResourceFieldRef)
		}
		if err != nil {
			return err
		}
		fm := mode
		if it.Mode != nil {
			fm = os.FileMode(*it.Mode)
		}
		out[it.Path] = File{Data: []byte(value), Mode: fm}
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

// sortedKeys are m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
