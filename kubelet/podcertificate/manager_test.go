package podcertificate

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/kubelet/volumemanager"
)

// fakeCertNode is a node whose requests are stored as the API server
// would (named req-1, req-2...), readable as its watch's cache.
type fakeCertNode struct {
	clock    *clocktesting.FakePassiveClock
	requests map[string]*certificatesv1.PodCertificateRequest // by "ns/name"
	created  []string
	events   []string // "reason: message"
	down     bool     // creating a request fails
}

func newFakeCertNode(clk *clocktesting.FakePassiveClock) *fakeCertNode {
	return &fakeCertNode{clock: clk, requests: map[string]*certificatesv1.PodCertificateRequest{}}
}

func (f *fakeCertNode) nodeRef() (types.NodeName, types.UID) { return "node01", "node-uid" }

func (f *fakeCertNode) serviceAccountUID(context.Context, string, string) (types.UID, error) {
	return "sa-uid", nil
}

func (f *fakeCertNode) createRequest(_ context.Context, r *certificatesv1.PodCertificateRequest) (*certificatesv1.PodCertificateRequest, error) {
	if f.down {
		return nil, errors.New("connection refused")
	}
	out := r.DeepCopy()
	out.Name = fmt.Sprintf("%s%d", r.GenerateName, len(f.created)+1)
	out.CreationTimestamp = metav1.NewTime(f.clock.Now())
	f.requests[out.Namespace+"/"+out.Name] = out
	f.created = append(f.created, out.Name)
	return out, nil
}

func (f *fakeCertNode) warn(_ *corev1.Pod, reason, format string, args ...any) {
	f.events = append(f.events, reason+": "+fmt.Sprintf(format, args...))
}

func (f *fakeCertNode) get(ns, name string) (*certificatesv1.PodCertificateRequest, bool) {
	r, ok := f.requests[ns+"/"+name]
	return r, ok
}

// issue signs the stored request name for its stub's key, from now for
// life, and marks it Issued, as a signer does.
func (f *fakeCertNode) issue(t *testing.T, name string, life, refreshAfter time.Duration) *x509.Certificate {
	t.Helper()
	r := f.requests["default/"+name]
	stub, err := x509.ParseCertificateRequest(r.Spec.StubPKCS10Request)
	if err != nil {
		t.Fatal(err)
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := f.clock.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: r.Spec.PodName}, NotBefore: now, NotAfter: now.Add(life)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, &x509.Certificate{Subject: pkix.Name{CommonName: "ca"}}, stub.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	r.Status = certificatesv1.PodCertificateRequestStatus{
		Conditions:       []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeIssued, Status: metav1.ConditionTrue, Reason: "Signed"}},
		CertificateChain: "issued by the test\n" + string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		NotBefore:        ptr.To(metav1.NewTime(now)), NotAfter: ptr.To(metav1.NewTime(now.Add(life))), BeginRefreshAt: ptr.To(metav1.NewTime(now.Add(refreshAfter))),
	}
	return leaf
}

// refuse marks the stored request name with a terminal condition.
func (f *fakeCertNode) refuse(name, condition, reason string) {
	f.requests["default/"+name].Status.Conditions = []metav1.Condition{{Type: condition, Status: metav1.ConditionTrue, Reason: reason, Message: "no " + reason}}
}

func certPod(src *corev1.PodCertificateProjection) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "pod-uid"},
		Spec: corev1.PodSpec{ServiceAccountName: "robot", Volumes: []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{
			Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{PodCertificate: src}}}}}}}}
}

func testPodCertificates(clk *clocktesting.FakePassiveClock, node *fakeCertNode) *Manager {
	m := NewManager(node.get, clk, slog.New(slog.DiscardHandler))
	m.jitter = func() time.Duration { return 0 }
	return m
}

// privateKeyMatches: keyPEM is the private key of cert's public key.
func privateKeyMatches(t *testing.T, keyPEM []byte, cert *x509.Certificate) bool {
	t.Helper()
	b, _ := pem.Decode(keyPEM)
	if b == nil || b.Type != "PRIVATE KEY" {
		t.Fatalf("key %q is not a PEM PKCS#8 key", keyPEM)
	}
	key, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return key.(crypto.Signer).Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(cert.PublicKey)
}

func TestAPodCertificateSourceWaitsForItsSignerThenHoldsItsKeyAndChain(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(start)
	node := newFakeCertNode(clk)
	m := testPodCertificates(clk, node)
	src := &corev1.PodCertificateProjection{SignerName: "example.com/spiffe", KeyType: "ECDSAP256", MaxExpirationSeconds: ptr.To[int32](3600),
		UserAnnotations: map[string]string{"spiffe/path-overriding": "/custom"}, CredentialBundlePath: "bundle.pem"}
	pod := certPod(src)
	ctx := context.Background()

	// 1. The first setup asks: one request, the containers wait.
	if _, _, err := m.credentials(ctx, node, pod, "tls", 0, src); !errors.Is(err, errNotIssued) {
		t.Fatalf("before issuance: %v, want %v", err, errNotIssued)
	}
	if len(node.created) != 1 {
		t.Fatalf("requests created: %v, want one", node.created)
	}
	r := node.requests["default/req-1"]
	want := certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/spiffe", PodName: "web", PodUID: "pod-uid",
		ServiceAccountName: "robot", ServiceAccountUID: "sa-uid", NodeName: "node01", NodeUID: "node-uid", MaxExpirationSeconds: ptr.To[int32](3600),
		UnverifiedUserAnnotations: map[string]string{"spiffe/path-overriding": "/custom"}, StubPKCS10Request: r.Spec.StubPKCS10Request}
	if !apiequality.Semantic.DeepEqual(r.Spec, want) {
		t.Errorf("request spec\n %+v\nwant\n %+v", r.Spec, want)
	}
	if o := r.OwnerReferences; len(o) != 1 || o[0].Kind != "Pod" || o[0].UID != "pod-uid" {
		t.Errorf("owned by %+v, want the pod: deleting it deletes its requests", o)
	}
	if stub, err := x509.ParseCertificateRequest(r.Spec.StubPKCS10Request); err != nil || stub.CheckSignature() != nil || len(stub.Subject.Names) != 0 {
		t.Errorf("the stub request is not an empty request its key signed: %v", err)
	}

	// 2. Syncs until the signer answers ask no more.
	clk.SetTime(clk.Now().Add(time.Minute))
	if _, _, err := m.credentials(ctx, node, pod, "tls", 0, src); !errors.Is(err, errNotIssued) || len(node.created) != 1 {
		t.Fatalf("still pending: %v, %v requests", err, node.created)
	}

	// 3. Issued: the key kept in memory and the chain, cleaned.
	leaf := node.issue(t, "req-1", time.Hour, 40*time.Minute)
	key, chain, err := m.credentials(ctx, node, pod, "tls", 0, src)
	if err != nil {
		t.Fatal(err)
	}
	if !privateKeyMatches(t, key, leaf) {
		t.Error("the key served is not the certificate's")
	}
	if strings.Contains(string(chain), "issued by the test") || !strings.HasPrefix(string(chain), "-----BEGIN CERTIFICATE-----") {
		t.Errorf("chain not cleaned:\n%s", chain)
	}

	// 4. At beginRefreshAt it asks again, serving the old credentials
	// until the new ones come.
	clk.SetTime(clk.Now().Add(39 * time.Minute))
	if m.RefreshDue(pod) {
		t.Error("due for refresh before beginRefreshAt")
	}
	clk.SetTime(clk.Now().Add(time.Minute))
	if !m.RefreshDue(pod) {
		t.Error("not due for refresh at beginRefreshAt")
	}
	if k, _, err := m.credentials(ctx, node, pod, "tls", 0, src); err != nil || string(k) != string(key) || len(node.created) != 2 {
		t.Fatalf("refreshing: %v, %d requests, same key %v", err, len(node.created), string(k) == string(key))
	}
	clk.SetTime(clk.Now().Add(11 * time.Minute)) // the signer is slow: overdue
	m.credentials(ctx, node, pod, "tls", 0, src)
	if len(node.events) != 1 || node.events[0] != "CertificateOverdueForRefresh: PodCertificate refresh overdue" {
		t.Errorf("events %q, want an overdue warning", node.events)
	}
	renewed := node.issue(t, "req-2", time.Hour, 40*time.Minute)
	if k, _, err := m.credentials(ctx, node, pod, "tls", 0, src); err != nil || !privateKeyMatches(t, k, renewed) || string(k) == string(key) {
		t.Errorf("after the refresh: %v; a new key %v", err, string(k) != string(key))
	}

	// 5. The pod gone, its credentials go.
	m.Forget(pod.UID)
	if !m.Empty() {
		t.Error("credentials kept after the pod was forgotten")
	}
}

func TestAPodCertificateRequestsAnswerEndsItsWait(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	src := &corev1.PodCertificateProjection{SignerName: "example.com/spiffe", KeyType: "ED25519", KeyPath: "key.pem", CertificateChainPath: "chain.pem"}
	tests := []struct {
		name   string
		answer func(n *fakeCertNode)
		after  time.Duration // since the request was created
		err    string
		event  string
		again  int // the requests made once the pod is synced again, an hour later
	}{
		{"a denial is final, and the pod is told", func(n *fakeCertNode) {
			n.refuse("req-1", certificatesv1.PodCertificateRequestConditionTypeDenied, "Policy")
		}, time.Minute, `PodCertificateRequest was permanently denied: reason="Policy" message="no Policy"`,
			`Denied: PodCertificateRequest default/req-1 was denied, reason="Policy", message="no Policy"`, 1},
		{"so is a failure", func(n *fakeCertNode) {
			n.refuse("req-1", certificatesv1.PodCertificateRequestConditionTypeFailed, "Backend")
		}, time.Minute, `PodCertificateRequest was permanently failed: reason="Backend" message="no Backend"`,
			`Failed: PodCertificateRequest default/req-1 failed, reason="Backend", message="no Backend"`, 1},
		{"a request the watch does not show yet is waited for", func(n *fakeCertNode) { delete(n.requests, "default/req-1") },
			9 * time.Minute, errNotIssued.Error(), "", 2},
		{"one gone for 10 minutes was deleted: it is asked again", func(n *fakeCertNode) { delete(n.requests, "default/req-1") },
			11 * time.Minute, `PodCertificateRequest "default/req-1" appears to have been deleted`, "", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(start)
			node := newFakeCertNode(clk)
			m := testPodCertificates(clk, node)
			pod := certPod(src)
			ctx := context.Background()
			if _, _, err := m.credentials(ctx, node, pod, "tls", 0, src); !errors.Is(err, errNotIssued) {
				t.Fatal(err)
			}
			tc.answer(node)
			clk.SetTime(clk.Now().Add(tc.after))
			if _, _, err := m.credentials(ctx, node, pod, "tls", 0, src); err == nil || err.Error() != tc.err {
				t.Errorf("error %v, want %q", err, tc.err)
			}
			if len(node.created) != 1 {
				t.Errorf("requests %v, want the first only", node.created)
			}
			if got := strings.Join(node.events, "; "); got != tc.event {
				t.Errorf("events %q, want %q", got, tc.event)
			}
			clk.SetTime(clk.Now().Add(time.Hour))
			m.credentials(ctx, node, pod, "tls", 0, src)
			m.credentials(ctx, node, pod, "tls", 0, src)
			if len(node.created) != tc.again {
				t.Errorf("an hour later: requests %v, want %d", node.created, tc.again)
			}
		})
	}
}

func TestThePodCertificateKeyIsOfTheSourcesKeyType(t *testing.T) {
	// RSA4096 is left out: generating one takes seconds.
	tests := []struct {
		keyType string
		check   func(pub crypto.PublicKey) bool
	}{
		{"ED25519", func(pub crypto.PublicKey) bool { _, ok := pub.(ed25519.PublicKey); return ok }},
		{"ECDSAP256", func(pub crypto.PublicKey) bool {
			k, ok := pub.(*ecdsa.PublicKey)
			return ok && k.Curve == elliptic.P256()
		}},
		{"ECDSAP384", func(pub crypto.PublicKey) bool {
			k, ok := pub.(*ecdsa.PublicKey)
			return ok && k.Curve == elliptic.P384()
		}},
		{"ECDSAP521", func(pub crypto.PublicKey) bool {
			k, ok := pub.(*ecdsa.PublicKey)
			return ok && k.Curve == elliptic.P521()
		}},
		{"RSA3072", func(pub crypto.PublicKey) bool { k, ok := pub.(*rsa.PublicKey); return ok && k.N.BitLen() == 3072 }},
	}
	for _, tc := range tests {
		t.Run(tc.keyType, func(t *testing.T) {
			key, stub, err := generateKeyAndStub(tc.keyType)
			if err != nil {
				t.Fatal(err)
			}
			req, err := x509.ParseCertificateRequest(stub)
			if err != nil || req.CheckSignature() != nil {
				t.Fatalf("stub request: %v", err)
			}
			if !tc.check(req.PublicKey) || !key.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(req.PublicKey) {
				t.Errorf("the stub's key is a %T, not the generated %s key", req.PublicKey, tc.keyType)
			}
		})
	}
	if _, _, err := generateKeyAndStub("DSA"); err == nil || err.Error() != `unknown key type "DSA"` {
		t.Errorf("an unknown key type: %v", err)
	}
}

func TestAPodCertificateSourceWritesTheFilesItNames(t *testing.T) {
	key, chain := []byte("KEY\n"), []byte("CHAIN\n")
	tests := []struct {
		name string
		src  corev1.PodCertificateProjection
		want map[string]string
	}{
		{"a credential bundle is the key, then the chain", corev1.PodCertificateProjection{CredentialBundlePath: "bundle.pem"},
			map[string]string{"bundle.pem": "KEY\nCHAIN\n"}},
		{"or the key and the chain apart", corev1.PodCertificateProjection{KeyPath: "tls.key", CertificateChainPath: "tls.crt"},
			map[string]string{"tls.key": "KEY\n", "tls.crt": "CHAIN\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := map[string]volumemanager.File{}
			certificateFiles(&tc.src, key, chain, 0o644, out)
			if len(out) != len(tc.want) {
				t.Fatalf("files %v, want %v", out, tc.want)
			}
			for path, data := range tc.want {
				if f := out[path]; string(f.Data) != data || f.Mode != 0o644 {
					t.Errorf("%s = %q %v, want %q 0644", path, f.Data, f.Mode, data)
				}
			}
		})
	}
}
