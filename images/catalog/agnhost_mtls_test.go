package catalog

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/images/shell"
	"github.com/mkube/mkube/network/podnetwork/podnet"
)

// issue is a certificate for key, signed by parent (nil: self-signed),
// in PEM, with the given names.
func issue(t *testing.T, key *ecdsa.PrivateKey, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, tmpl *x509.Certificate) (*x509.Certificate, []byte) {
	t.Helper()
	tmpl.SerialNumber = big.NewInt(time.Now().UnixNano())
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// credentialBundle is a podCertificate projection's file: the key, then
// the chain.
func credentialBundle(t *testing.T, key *ecdsa.PrivateKey, certPEM []byte) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), certPEM...)
}

// The mtlsclient reaches the mtlsserver with its SPIFFE certificate and
// logs the identity the server verified; a client whose certificate the
// server's roots do not know is refused.
func TestMTLSClientAndServer(t *testing.T) {
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey, otherKey, serverKey, clientKey := newKey(), newKey(), newKey(), newKey()
	ca, caPEM := issue(t, caKey, nil, nil, &x509.Certificate{Subject: pkix.Name{CommonName: "spiffe-ca"}, IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign})
	other, _ := issue(t, otherKey, nil, nil, &x509.Certificate{Subject: pkix.Name{CommonName: "another-ca"}, IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign})
	_, serverPEM := issue(t, serverKey, ca, caKey, &x509.Certificate{DNSNames: []string{"server.default.svc.cluster.local"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	// The clients' certificates name no extended key usage: agnhost's
	// server verifies them with x509's default usage, server auth.
	id, _ := url.Parse("spiffe://cluster.local/ns/default/sa/default")
	_, clientPEM := issue(t, clientKey, ca, caKey, &x509.Certificate{URIs: []*url.URL{id}})
	_, strangerPEM := issue(t, clientKey, other, otherKey, &x509.Certificate{URIs: []*url.URL{id}})

	serverFS := shell.NewFS()
	serverFS.WriteFile("/trust.pem", caPEM)
	serverFS.WriteFile("/creds.pem", credentialBundle(t, serverKey, serverPEM))
	serverArgs := []string{"/agnhost", "mtlsserver", "--listen=0.0.0.0:8443", "--server-creds=/creds.pem", "--spiffe-trust-bundle=/trust.pem"}
	server := Running{Process: shell.New(shell.Options{Clock: clocktesting.NewFakeClock(epoch), FS: serverFS, Stderr: &strings.Builder{}}), Argv: serverArgs}
	// The client's network has one server: the mtlsserver, at the name
	// its certificate gives.
	dialServer := func(_ context.Context, network, address string) (net.Conn, error) {
		if network != "tcp" || address != "server.default.svc.cluster.local:443" {
			t.Errorf("the client dialled %s %s", network, address)
		}
		client, pod := podnet.Pipe(&net.TCPAddr{}, &net.TCPAddr{})
		go agnhostServe(server, 8443, pod)
		return client, nil
	}
	for _, tc := range []struct {
		name, want string
		chain      []byte
	}{
		{"a certificate of the server's roots", "Client Identity: spiffe://cluster.local/ns/default/sa/default", clientPEM},
		{"a stranger's certificate", `non-2xx status 401 "401 Unauthorized"`, strangerPEM},
	} {
		clientFS := shell.NewFS()
		clientFS.WriteFile("/trust.pem", caPEM)
		clientFS.WriteFile("/creds.pem", credentialBundle(t, clientKey, tc.chain))
		p := shell.New(shell.Options{Clock: clocktesting.NewFakeClock(epoch), FS: clientFS, Dial: dialServer})
		body, err := mtlsPoll(t.Context(), p, "https://server.default.svc.cluster.local/spiffe-echo", "/trust.pem", "/creds.pem")
		if body != tc.want && (err == nil || err.Error() != tc.want) {
			t.Errorf("%s: got %q, %v; want %q", tc.name, body, err, tc.want)
		}
	}

	// Missing files end the server before it listens, as cobra's RunE.
	var stderr strings.Builder
	p := shell.New(shell.Options{Clock: clocktesting.NewFakeClock(epoch), FS: shell.NewFS(), Stderr: &stderr})
	if code, _ := agnhost(t.Context(), p, serverArgs[1:], &stderr); code != 1 ||
		stderr.String() != "Error: error while serving: while reading SPIFFE trust anchors: open /trust.pem: no such file or directory\n" {
		t.Errorf("mtlsserver without its files: exit %d, %q", code, stderr.String())
	}
}
