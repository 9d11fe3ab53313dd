package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/internal/testserver"
)

// testCA is a signer's CA: its key and self-signed certificate.
type testCA struct {
	key  *ecdsa.PrivateKey
	cert *x509.Certificate
	pem  string
}

func newTestCA(t *testing.T, cn string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{key: key, cert: cert, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

// indented is PEM text as a YAML block scalar's lines.
func indented(pemText string) string {
	return strings.ReplaceAll(strings.TrimRight(pemText, "\n"), "\n", "\n    ")
}

// runTestSigner is a signer of signerName, as the conformance suite's
// hermeticpodcertificatesigner: it watches the signer's
// PodCertificateRequests and writes each one's status once, through the
// status subresource: Denied for the pod named deny, else Issued, a
// certificate for the requested key from ca, living the request's
// maxExpirationSeconds, to be refreshed 30 minutes before its end. It
// stops when the test ends.
func runTestSigner(t *testing.T, c *cluster, ca *testCA, signerName, deny string) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	path := "/apis/certificates.k8s.io/v1/podcertificaterequests"
	req, _ := http.NewRequestWithContext(ctx, "GET", c.URL+path+"?watch=true&fieldSelector="+url.QueryEscape("spec.signerName="+signerName), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	wg.Go(func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			var ev struct {
				Type   string
				Object certificatesv1.PodCertificateRequest
			}
			if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Type != "ADDED" {
				continue
			}
			r := &ev.Object
			if err := answer(r, ca, deny); err != nil {
				t.Errorf("signer: %s: %v", r.Name, err)
				continue
			}
			body, _ := json.Marshal(r)
			put, _ := http.NewRequestWithContext(ctx, "PUT", c.URL+"/apis/certificates.k8s.io/v1/namespaces/"+r.Namespace+"/podcertificaterequests/"+r.Name+"/status",
				bytes.NewReader(body))
			put.Header.Set("Content-Type", "application/json")
			if res, err := http.DefaultClient.Do(put); err == nil {
				if res.StatusCode != http.StatusOK {
					t.Errorf("signer: status of %s: %s", r.Name, res.Status)
				}
				res.Body.Close()
			} else if ctx.Err() == nil {
				t.Errorf("signer: status of %s: %v", r.Name, err)
			}
		}
	})
}

// answer fills r's status: denied, or issued by ca.
func answer(r *certificatesv1.PodCertificateRequest, ca *testCA, deny string) error {
	now := time.Now()
	if r.Spec.PodName == deny {
		r.Status.Conditions = []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeDenied, Status: metav1.ConditionTrue,
			Reason: "NotInPolicy", Message: "the test denies " + deny, LastTransitionTime: metav1.NewTime(now)}}
		return nil
	}
	stub, err := x509.ParseCertificateRequest(r.Spec.StubPKCS10Request)
	if err != nil {
		return err
	}
	notBefore := now.Add(-2 * time.Minute).Truncate(time.Second)
	notAfter := notBefore.Add(time.Duration(*r.Spec.MaxExpirationSeconds) * time.Second)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(now.UnixNano()), Subject: pkix.Name{CommonName: r.Spec.PodName},
		URIs:      []*url.URL{{Scheme: "spiffe", Host: "cluster.local", Path: "/ns/" + r.Namespace + "/sa/" + r.Spec.ServiceAccountName}},
		NotBefore: notBefore, NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, stub.PublicKey, ca.key)
	if err != nil {
		return err
	}
	r.Status = certificatesv1.PodCertificateRequestStatus{
		Conditions: []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeIssued, Status: metav1.ConditionTrue,
			Reason: "Signed", Message: "by the test's signer", LastTransitionTime: metav1.NewTime(now)}},
		CertificateChain: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		NotBefore:        &metav1.Time{Time: notBefore}, NotAfter: &metav1.Time{Time: notAfter},
		BeginRefreshAt: &metav1.Time{Time: notAfter.Add(-30 * time.Minute)},
	}
	return nil
}

// certificatePod is a pod that mounts, in one projected volume at
// /certs, the bundle db-roots by name (db.pem), every bundle of signer
// (ca.pem), and a certificate of signer (bundle.pem, tls.key, tls.crt).
func certificatePod(name, signer string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s}
spec:
  containers:
  - name: app
    image: busybox
    command: ["sleep", "3600"]
    volumeMounts: [{name: certs, mountPath: /certs}]
  volumes:
  - name: certs
    projected:
      sources:
      - clusterTrustBundle: {name: db-roots, path: db.pem}
      - clusterTrustBundle: {signerName: %[2]s, labelSelector: {}, path: ca.pem}
      - podCertificate: {signerName: %[2]s, keyType: ECDSAP256, maxExpirationSeconds: 3600,
          credentialBundlePath: bundle.pem, keyPath: tls.key, certificateChainPath: tls.crt}
`, name, signer)
}

// Pod certificates and trust bundles with the real kubectl, on a cluster
// of least privilege (the kubelet on its node's own certificate, judged
// by the Node authorizer and NodeRestriction): the kubelet asks for a
// pod's certificate with a PodCertificateRequest, the pod waits in
// ContainerCreating until the signer (the test's) issues it, and then
// its container reads its key, its chain and the ClusterTrustBundles it
// mounts; a changed bundle reaches the file; a denied request keeps its
// pod from starting; a node may ask only for its own pods.
func TestPodCertificatesAndClusterTrustBundlesInAProjectedVolume(t *testing.T) {
	t.Parallel()
	c := startClusterWith(t, clusterFlags{secure: true}, kubeletNode{name: "node01", flags: []string{"--sync-frequency", "2s"}})
	k := newKubectl(t, c)
	const signer = "example.com/e2e"
	ca, db, db2 := newTestCA(t, "e2e-signer"), newTestCA(t, "db-root"), newTestCA(t, "db-root-2")
	bundles := func(dbPEM string) string {
		return fmt.Sprintf(`apiVersion: certificates.k8s.io/v1
kind: ClusterTrustBundle
metadata: {name: db-roots}
spec:
  trustBundle: |
    %s
---
apiVersion: certificates.k8s.io/v1
kind: ClusterTrustBundle
metadata: {name: "example.com:e2e:roots"}
spec:
  signerName: %s
  trustBundle: |
    %s
`, indented(dbPEM), signer, indented(ca.pem))
	}
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "bundles.yaml", bundles(db.pem)))
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "web.yaml", certificatePod("web", signer)))

	// The kubelet asks; nobody has answered yet.
	testserver.EventuallyWithin(t, 60*time.Second, "the kubelet requests web's certificate", func() (bool, string) {
		out, errOut, _ := k.kubectl(t, "get", "podcertificaterequests")
		if errOut != "" || !strings.Contains(out, "req-") {
			return false, out + errOut
		}
		row := parseTable(t, out).rows[0]
		return row["PODNAME"] == "web" && row["SERVICEACCOUNTNAME"] == "default" && row["NODENAME"] == "node01" &&
			row["SIGNERNAME"] == signer && row["STATE"] == "Pending", out
	})
	if out := k.mustKubectl(t, "get", "pod", "web", "--no-headers"); !strings.Contains(out, "ContainerCreating") {
		t.Errorf("web before its certificate: %s, want ContainerCreating", out)
	}

	runTestSigner(t, c, ca, signer, "deny")
	testserver.EventuallyWithin(t, 60*time.Second, "web runs once its certificate is issued", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "pod", "web", "-o", "jsonpath={.status.phase}")
		return out == "Running", out
	})
	if row := parseTable(t, k.mustKubectl(t, "get", "podcertificaterequests")).rows[0]; row["STATE"] != "Issued" {
		t.Errorf("the request after issuance: %v", row)
	}

	cat := func(file string) string { return k.mustKubectl(t, "exec", "web", "--", "cat", "/certs/"+file) }
	chainPEM, keyPEM := cat("tls.crt"), cat("tls.key")
	block, _ := pem.Decode([]byte(chainPEM))
	if block == nil {
		t.Fatalf("tls.crt: %q", chainPEM)
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Errorf("web's certificate is not the signer's: %v", err)
	}
	if life := leaf.NotAfter.Sub(leaf.NotBefore); life != time.Hour {
		t.Errorf("web's certificate lives %v, want maxExpirationSeconds' hour", life)
	}
	kb, _ := pem.Decode([]byte(keyPEM))
	if kb == nil || kb.Type != "PRIVATE KEY" {
		t.Fatalf("tls.key: %q", keyPEM)
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil || !key.(crypto.Signer).Public().(*ecdsa.PublicKey).Equal(leaf.PublicKey) {
		t.Errorf("tls.key is not the certificate's key (%T, %v)", key, err)
	}
	if got := cat("bundle.pem"); got != keyPEM+chainPEM {
		t.Errorf("bundle.pem is not the key then the chain:\n%s", got)
	}
	if got := cat("ca.pem"); got != ca.pem {
		t.Errorf("ca.pem, the signer's bundles:\n%s\nwant\n%s", got, ca.pem)
	}
	if got := cat("db.pem"); got != db.pem {
		t.Errorf("db.pem, db-roots by name:\n%s\nwant\n%s", got, db.pem)
	}

	// A bundle that changes reaches the file at the next volume resync.
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "bundles.yaml", bundles(db2.pem)))
	testserver.EventuallyWithin(t, 30*time.Second, "db.pem follows the bundle", func() (bool, string) {
		got, _, _ := k.kubectl(t, "exec", "web", "--", "cat", "/certs/db.pem")
		return got == db2.pem, got
	})

	// A denied request is final: the pod does not start, and says why.
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "deny.yaml", certificatePod("deny", signer)))
	testserver.EventuallyWithin(t, 60*time.Second, "the kubelet tells the denial", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "events", "--field-selector", "involvedObject.name=deny,reason=Denied", "-o", "jsonpath={.items[*].message}")
		return strings.Contains(out, `was denied, reason="NotInPolicy", message="the test denies deny"`), out
	})
	if out := k.mustKubectl(t, "get", "pod", "deny", "--no-headers"); !strings.Contains(out, "ContainerCreating") {
		t.Errorf("a pod whose certificate was denied: %s, want ContainerCreating", out)
	}

	// NodeRestriction: node01 may not ask in another node's name, nor
	// write a request's status, which is the signer's.
	secure := fmt.Sprintf("https://127.0.0.1:%d/apis/certificates.k8s.io/v1/namespaces/default/podcertificaterequests", c.securePort)
	var web struct{ Metadata struct{ UID string } }
	json.Unmarshal([]byte(k.mustKubectl(t, "get", "pod", "web", "-o", "json")), &web)
	forged := fmt.Sprintf(`{"apiVersion":"certificates.k8s.io/v1","kind":"PodCertificateRequest","metadata":{"generateName":"req-"},
		"spec":{"signerName":%q,"podName":"web","podUID":%q,"serviceAccountName":"default","serviceAccountUID":"x","nodeName":"node02","nodeUID":"x",
		"stubPKCS10Request":"AA=="}}`, signer, web.Metadata.UID)
	want := `is forbidden: PodCertificateRequest.Spec.NodeName="node02", which is not the requesting node "node01"`
	if code, body := certRequest(t, c.certDir(), "kubelet-node01", "POST", secure, forged); code != http.StatusForbidden || !strings.Contains(statusMessage(body), want) {
		t.Errorf("node01 asks in node02's name: %d %s\nwant 403 %s", code, body, want)
	}
	name := strings.TrimPrefix(strings.TrimSpace(k.mustKubectl(t, "get", "podcertificaterequests", "--field-selector", "spec.podName=web", "-o", "name")),
		"podcertificaterequest.certificates.k8s.io/")
	if code, body := certRequest(t, c.certDir(), "kubelet-node01", "PATCH", secure+"/"+name+"/status", `{"status":{"conditions":[]}}`); code != http.StatusForbidden {
		t.Errorf("node01 writes a request's status: %d %s, want 403", code, body)
	}

	// Deleting the pod deletes its requests (they are owned by it).
	k.mustKubectl(t, "delete", "pod", "web", "--wait=false")
	testserver.EventuallyWithin(t, 60*time.Second, "web's request goes with it", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "podcertificaterequests", "--field-selector", "spec.podName=web", "-o", "name")
		return out == "", out
	})
}
