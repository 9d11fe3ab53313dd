package clustertrustbundle

import (
	"encoding/pem"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mkube/mkube/client"
)

// Manager is the kubelet's ClusterTrustBundle manager (Kubernetes'
// pkg/kubelet/clustertrustbundle): a clusterTrustBundle projected source
// becomes one file of PEM trust anchors, taken from the fleet's watch of
// every ClusterTrustBundle (system:node may read them all):
//
//   - by name: that bundle's anchors; a bundle that does not exist is an
//     empty file if the source is optional, else the volume waits;
//   - by signerName and labelSelector: the anchors of every bundle of the
//     signer whose labels match (no selector matches nothing, an empty
//     one everything); none is an empty file if optional, else the volume
//     waits.
//
// The anchors are normalized: each certificate once, headers and text
// between blocks dropped, in the order of their DER bytes. (Kubernetes
// then shuffles them, once per normalization, so that nobody comes to
// depend on an order; mkube keeps them sorted, so that a file changes
// only when its anchors do.) A changed bundle reaches the pods that
// mount bundles at the next volume resync, within --sync-frequency.
type Manager struct {
	Informer *client.Informer
	bundles  bundleCache // the informer's cache
	// changed is set by the informer's handlers (any add, update or
	// delete) and taken by the volume resync (the kubelet's volumes.go).
	changed atomic.Bool
}

// bundleCache is what Manager reads of its informer's cache.
type bundleCache interface {
	Get(name string) (runtime.Object, bool)
	List() []runtime.Object
}

// maxLabelSelectorLength is Kubernetes' bound on a source's selector.
const maxLabelSelectorLength = 100 * 1024

// NewManager returns the manager of every ClusterTrustBundle c may list;
// its Informer is run by the kubelet.
func NewManager(c *client.Client, log *slog.Logger) *Manager {
	inf := client.NewInformer(c, client.ClusterTrustBundles, "", client.ListOptions{}, log)
	t := &Manager{Informer: inf, bundles: inf.Cache()}
	note := func(runtime.Object) { t.changed.Store(true) }
	t.Informer.AddHandler(client.Handler{OnAdd: note, OnUpdate: func(_, obj runtime.Object) { note(obj) }, OnDelete: note})
	return t
}

// TakeChanged reports whether a bundle changed since the last call.
func (t *Manager) TakeChanged() bool { return t.changed.Swap(false) }

// ctbResource is how the kubelet's lister names a missing bundle.
var ctbResource = schema.GroupResource{Group: certificatesv1.GroupName, Resource: "clustertrustbundle"}

// Anchors is the content of a clusterTrustBundle source's file.
func (t *Manager) Anchors(src *corev1.ClusterTrustBundleProjection) ([]byte, error) {
	optional := src.Optional != nil && *src.Optional
	switch {
	case src.Name != nil:
		obj, ok := t.bundles.Get(*src.Name)
		if !ok {
			if optional {
				return []byte{}, nil
			}
			return nil, fmt.Errorf("while getting ClusterTrustBundle: %w", apierrors.NewNotFound(ctbResource, *src.Name))
		}
		return normalizeAnchors([]*certificatesv1.ClusterTrustBundle{obj.(*certificatesv1.ClusterTrustBundle)}), nil
	case src.SignerName != nil:
		return t.bySigner(*src.SignerName, src.LabelSelector, optional)
	}
	return nil, fmt.Errorf("ClusterTrustBundle projection requires either name or signerName to be set")
}

// bySigner: the anchors of the signer's bundles that selector matches.
func (t *Manager) bySigner(signer string, selector *metav1.LabelSelector, optional bool) ([]byte, error) {
	sel, err := metav1.LabelSelectorAsSelector(selector) // nil: labels.Nothing()
	if err != nil {
		return nil, fmt.Errorf("while parsing label selector: %w", err)
	}
	if n := len(sel.String()); n > maxLabelSelectorLength {
		return nil, fmt.Errorf("label selector length (%d) is larger than %d", n, maxLabelSelectorLength)
	}
	var matched []*certificatesv1.ClusterTrustBundle
	for _, obj := range t.bundles.List() {
		b := obj.(*certificatesv1.ClusterTrustBundle)
		if b.Spec.SignerName == signer && sel.Matches(labels.Set(b.Labels)) {
			matched = append(matched, b)
		}
	}
	if len(matched) == 0 {
		if optional {
			return []byte{}, nil
		}
		return nil, fmt.Errorf("combination of signerName and labelSelector matched zero ClusterTrustBundles")
	}
	return normalizeAnchors(matched), nil
}

// normalizeAnchors is the bundles' certificates, each once, re-encoded
// as bare PEM blocks, sorted.
func normalizeAnchors(bundles []*certificatesv1.ClusterTrustBundle) []byte {
	var ders []string
	for _, b := range bundles {
		rest := []byte(b.Spec.TrustBundle)
		for {
			var block *pem.Block
			if block, rest = pem.Decode(rest); block == nil {
				break
			}
			ders = append(ders, string(block.Bytes))
		}
	}
	slices.Sort(ders)
	out := []byte{}
	for _, der := range slices.Compact(ders) {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte(der)})...)
	}
	return out
}

// MountsTrustBundles: one of pod's projected volumes has a
// clusterTrustBundle source, which a changed bundle may change.
func MountsTrustBundles(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.ClusterTrustBundle != nil {
				return true
			}
		}
	}
	return false
}
