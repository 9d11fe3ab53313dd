package kubelet

// The pod certificates' keys and the node's part in their requests
// (podcertificates.go).

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/client"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/types"
)

// generateKeyAndStub is a new private key of keyType and the empty
// PKCS#10 request it signs, which proves to the API server that the
// kubelet holds the key.
func generateKeyAndStub(keyType string) (crypto.Signer, []byte, error) {
	var key crypto.Signer
	var err error
	switch keyType {
	case "RSA3072":
		key, err = rsa.GenerateKey(rand.Reader, 3072)
	case "RSA4096":
		key, err = rsa.GenerateKey(rand.Reader, 4096)
	case "ECDSAP256":
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ECDSAP384":
		key, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "ECDSAP521":
		key, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	case "ED25519":
		_, key, err = ed25519.GenerateKey(rand.Reader)
	default:
		return nil, nil, fmt.Errorf("unknown key type %q", keyType)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("while generating %s key: %w", keyType, err)
	}
	stub, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		return nil, nil, fmt.Errorf("while generating stub PKCS#10 request: %w", err)
	}
	return key, stub, nil
}

// cleanChain is the chain's PEM blocks as bare CERTIFICATE blocks:
// headers and text between them dropped.
func cleanChain(chain string) []byte {
	var out bytes.Buffer
	rest := []byte(chain)
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return out.Bytes()
		}
		out.Write(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b.Bytes}))
	}
}

// certificateNode is what a projection needs of the node it is for:
// *Kubelet, each node speaking for itself.
type certificateNode interface {
	nodeRef() (types.NodeName, types.UID)
	serviceAccountUID(ctx context.Context, namespace, name string) (types.UID, error)
	createRequest(ctx context.Context, r *certificatesv1.PodCertificateRequest) (*certificatesv1.PodCertificateRequest, error)
	warn(pod *corev1.Pod, reason, format string, args ...any)
}

// The node's part (certificateNode): its requests go as the node, which
// NodeRestriction holds to its own pods.

func (k *Kubelet) nodeRef() (types.NodeName, types.UID) {
	return types.NodeName(k.cfg.NodeName), k.nodeStatus.Node().UID
}

func (k *Kubelet) serviceAccountUID(ctx context.Context, ns, name string) (types.UID, error) {
	sa := &corev1.ServiceAccount{}
	if err := k.client.Get(ctx, client.ServiceAccounts, ns, name, sa); err != nil {
		return "", fmt.Errorf("while fetching service account: %w", err)
	}
	return sa.UID, nil
}

func (k *Kubelet) createRequest(ctx context.Context, r *certificatesv1.PodCertificateRequest) (*certificatesv1.PodCertificateRequest, error) {
	out := &certificatesv1.PodCertificateRequest{}
	return out, k.client.Create(ctx, client.PodCertificateRequests, r.Namespace, r, out)
}

func (k *Kubelet) warn(pod *corev1.Pod, reason, format string, args ...any) {
	k.recorder.Event(pod, corev1.EventTypeWarning, reason, format, args...)
}
