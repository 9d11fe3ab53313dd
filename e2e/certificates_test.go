package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// A CertificateSigningRequest's life with the real kubectl: created
// Pending, `kubectl certificate approve`, signed by the controller
// manager with the cluster's CA; the certificate is jane's, and the API
// server takes it for her. A request signed by nobody's key is refused.
func TestACertificateSigningRequestIsApprovedAndSigned(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil)
	k := newKubectl(t, c)
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "jane", Organization: []string{"devs"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	request := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "csr.yaml", fmt.Sprintf(`apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: jane}
spec:
  request: %s
  signerName: kubernetes.io/kube-apiserver-client
  expirationSeconds: 3600
  usages: [client auth]
`, request)))
	if row := parseTable(t, k.mustKubectl(t, "get", "csr", "jane")).rows[0]; row["CONDITION"] != "Pending" ||
		row["SIGNERNAME"] != "kubernetes.io/kube-apiserver-client" || row["REQUESTEDDURATION"] != "60m" || row["REQUESTOR"] != "system:unsecured" {
		t.Fatalf("kubectl get csr jane: %v", row)
	}
	k.mustKubectl(t, "certificate", "approve", "jane")
	var certPEM string
	testserver.EventuallyWithin(t, 20*time.Second, "the approved request is signed", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "csr", "jane", "-o", "jsonpath={.status.certificate}")
		pemBytes, _ := base64.StdEncoding.DecodeString(out)
		certPEM = string(pemBytes)
		row := parseTable(t, k.mustKubectl(t, "get", "csr", "jane")).rows[0]
		return certPEM != "" && row["CONDITION"] == "Approved,Issued", row["CONDITION"]
	})
	block, _ := pem.Decode([]byte(certPEM))
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := os.ReadFile(filepath.Join(c.certDir(), "ca.crt"))
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil || cert.Subject.CommonName != "jane" {
		t.Fatalf("the certificate of %s: %v", cert.Subject, err)
	}
	// jane's certificate and key, as curl --cert would present them.
	keyDER, _ := x509.MarshalECPrivateKey(key)
	os.WriteFile(filepath.Join(dir, "jane.crt"), []byte(certPEM), 0o600)
	os.WriteFile(filepath.Join(dir, "jane.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	os.WriteFile(filepath.Join(dir, "ca.crt"), caPEM, 0o600)
	_, body := certRequest(t, dir, "jane", "POST", fmt.Sprintf("https://127.0.0.1:%d/apis/authentication.k8s.io/v1/selfsubjectreviews", c.securePort),
		`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`)
	if !strings.Contains(body, `"username":"jane"`) || !strings.Contains(body, `"devs"`) {
		t.Errorf("who the API server takes jane's certificate for: %s", body)
	}

	// A request whose signature is not its key's is refused.
	forged := strings.Replace(request, request[len(request)/2:len(request)/2+4], "AAAA", 1)
	if errOut := k.mustFail(t, "apply", "-f", k.manifest(t, "forged.yaml", strings.Replace(fmt.Sprintf(`apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: forged}
spec: {request: %s, signerName: kubernetes.io/kube-apiserver-client, usages: [client auth]}
`, forged), "\n\n", "\n", -1))); !strings.Contains(errOut, `The CertificateSigningRequest "forged" is invalid: spec.request: Invalid value`) {
		t.Errorf("a forged request: %s", errOut)
	}
}

// API priority and fairness: the mandatory FlowSchemas and priority levels
// are there from the start, with Kubernetes' printers; a FlowSchema that
// names no priority level is refused.
func TestFlowSchemasAndPriorityLevels(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil)
	k := newKubectl(t, c)
	schemas := parseTable(t, k.mustKubectl(t, "get", "flowschemas"))
	if row := schemas.row(t, "NAME", "exempt"); row["PRIORITYLEVEL"] != "exempt" || row["MATCHINGPRECEDENCE"] != "1" {
		t.Errorf("flowschema exempt: %v", row)
	}
	if row := schemas.row(t, "NAME", "catch-all"); row["PRIORITYLEVEL"] != "catch-all" || row["MATCHINGPRECEDENCE"] != "10000" {
		t.Errorf("flowschema catch-all: %v", row)
	}
	levels := parseTable(t, k.mustKubectl(t, "get", "prioritylevelconfigurations"))
	if row := levels.row(t, "NAME", "exempt"); row["TYPE"] != "Exempt" {
		t.Errorf("priority level exempt: %v", row)
	}
	if row := levels.row(t, "NAME", "catch-all"); row["TYPE"] != "Limited" {
		t.Errorf("priority level catch-all: %v", row)
	}
	errOut := k.mustFail(t, "apply", "-f", k.manifest(t, "fs.yaml", `apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: nowhere}
spec: {priorityLevelConfiguration: {name: ""}, matchingPrecedence: 500}
`))
	if !strings.Contains(errOut, `The FlowSchema "nowhere" is invalid: spec.priorityLevelConfiguration.name: Required value: must reference a priority level`) {
		t.Errorf("a FlowSchema without a priority level: %s", errOut)
	}
}

// A ClusterTrustBundle of a signer, with the real kubectl: named after its
// signer, listed with it, and refused, in Kubernetes' words, when it
// holds no CA or is misnamed.
func TestClusterTrustBundles(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil)
	k := newKubectl(t, c)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "db-root"}, NotBefore: time.Now(),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := strings.ReplaceAll(string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), "\n", "\n    ")
	bundle := func(name, signer, pemText string) string {
		return fmt.Sprintf("apiVersion: certificates.k8s.io/v1\nkind: ClusterTrustBundle\nmetadata: {name: %q}\nspec:\n  signerName: %s\n  trustBundle: |\n    %s\n",
			name, signer, pemText)
	}
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "ctb.yaml", bundle("example.com:db:roots", "example.com/db", ca)))
	if row := parseTable(t, k.mustKubectl(t, "get", "clustertrustbundles")).rows[0]; row["NAME"] != "example.com:db:roots" || row["SIGNERNAME"] != "example.com/db" {
		t.Fatalf("kubectl get clustertrustbundles: %v", row)
	}
	if out := k.mustKubectl(t, "get", "clustertrustbundles", "--field-selector", "spec.signerName=example.com/web", "-o", "name"); out != "" {
		t.Errorf("another signer's bundles: %q, want none", out)
	}
	_, errOut, code := k.kubectl(t, "apply", "-f", k.manifest(t, "bad.yaml", bundle("roots", "example.com/db", "not a certificate")))
	if code == 0 || !strings.Contains(errOut, "ClusterTrustBundle for signerName example.com/db must be named with prefix example.com:db:") ||
		!strings.Contains(errOut, "at least one trust anchor must be provided") {
		t.Errorf("a misnamed bundle without anchors: exit %d, %s", code, errOut)
	}
}
