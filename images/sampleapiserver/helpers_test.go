package sampleapiserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests' scaffolding, as package catalog's tests have it: a fixed
// epoch for the fake clock, a buffer the process writes while the test
// reads, a wait without fixed sleeps, throwaway certificates, and
// checkLines.

var epoch = time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)

// syncBuffer is written by the process goroutine while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitUntil polls a condition the process goroutine brings about,
// yielding to it, failing after 5 s; it never sleeps a fixed time.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); runtime.Gosched() {
		if time.Now().After(end) {
			t.Fatalf("the process never got to: %s", what)
		}
	}
}

// selfSigned is a certificate and key, PEM.
func selfSigned(t *testing.T) (cert, key []byte) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "e2e-test-webhook.ns.svc"},
		NotBefore: epoch.Add(-time.Hour), NotAfter: epoch.Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalECPrivateKey(k)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})
}

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

// checkLines checks that each of want is in got, in order.
func checkLines(t *testing.T, stream, got string, want []string) {
	t.Helper()
	rest := got
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("%s lacks %q (in order) in:\n%s", stream, w, got)
			return
		}
		rest = rest[i+len(w):]
	}
}
