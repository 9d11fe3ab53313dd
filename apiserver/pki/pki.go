// Package pki is the cluster's public-key infrastructure, created by the
// API server at its first start as kubeadm would (seed 000: every
// component talks to the API server "over https on port 6443"):
//
//   - a CA (ca.crt, ca.key) that signs everything below and that every
//     client trusts;
//   - the API server's serving certificate (apiserver.crt), valid for the
//     names clients dial: localhost, 127.0.0.1, the host name, apiserver,
//     kubernetes, kubernetes.default, kubernetes.default.svc,
//     kubernetes.default.svc.cluster.local and the first ClusterIP;
//   - client certificates, whose subject is the identity: CN the user
//     name, O the groups (admin: kubernetes-admin in system:masters; the
//     scheduler, the controller manager, a kubelet fleet, each node; the
//     API server itself toward kubelets, apiserver-kubelet-client);
//   - admin.kubeconfig, to point kubectl at the secure port, and a
//     kubeconfig for each component (kubeconfig.go);
//   - a second CA, front-proxy-ca, and the one certificate it signs,
//     front-proxy-client: what the API server presents when it proxies a
//     request to an aggregated API server, which believes the user named
//     in the request's headers because of it (apiserver/aggregator).
//     A CA of its own, as kubeadm makes it, so that no ordinary client
//     certificate can pass for the proxy.
//
// Everything is kept in one directory; a restart reuses what is there.
//
// pki.go makes and loads the CAs and certificates (Ensure, Identity, Node);
// kubeconfig.go writes the kubeconfigs; lock.go is Lock, which lets API
// servers sharing one directory make it once.
package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Lifetimes, kubeadm's: the CA ten years, what it signs one year.
const (
	caLifetime   = 10 * 365 * 24 * time.Hour
	certLifetime = 365 * 24 * time.Hour
)

// Identity is who a client certificate says its holder is.
type Identity struct {
	Name   string   // file name: <Name>.crt, <Name>.key
	User   string   // the certificate's CN
	Groups []string // its O
}

// Admin is the cluster administrator kubectl uses: a member of
// system:masters, the group Kubernetes lets do anything.
var Admin = Identity{Name: "admin", User: "kubernetes-admin", Groups: []string{"system:masters"}}

// Components are the identities the control plane's own programs get, the
// users Kubernetes' default RBAC policy gives their roles to, and
// mkube's kubelet fleet (`kubelet --nodes N`), which speaks for its nodes
// by impersonating them (package authorization/node), and its dashboard.
var Components = []Identity{
	{Name: "controller-manager", User: "system:kube-controller-manager"},
	{Name: "scheduler", User: "system:kube-scheduler"},
	KubeletFleet,
	// mkube's dashboard (cmd/dashboard), read-only (RBAC's mkube:dashboard).
	{Name: "dashboard", User: "mkube:dashboard"},
}

// KubeletFleet is the identity of a kubelet process that runs many nodes.
var KubeletFleet = Identity{Name: "kubelet-fleet", User: "mkube:kubelet-fleet", Groups: []string{"mkube:kubelet-fleets"}}

// Node is the identity of the kubelet of node name, as Kubernetes names
// kubelets: user system:node:<name> in group system:nodes, the two things
// the Node authorizer and NodeRestriction look for. Its files are
// kubelet-<name>.crt, .key and .kubeconfig (kubeadm's kubelet.conf).
func Node(name string) Identity {
	return Identity{Name: "kubelet-" + name, User: "system:node:" + name, Groups: []string{"system:nodes"}}
}

// APIServerKubeletClient is the API server's identity toward kubelets
// (kube-apiserver's --kubelet-client-certificate; kubeadm's
// apiserver-kubelet-client.crt, CN kube-apiserver-kubelet-client). RBAC's
// default policy binds it to system:kubelet-api-admin, which a kubelet
// with --authorization-mode=Webhook asks about.
var APIServerKubeletClient = Identity{Name: "apiserver-kubelet-client", User: "kube-apiserver-kubelet-client"}

// FrontProxyClient is the front proxy's identity, kube-apiserver's
// --proxy-client-cert-file, which aggregated API servers accept from
// the CN list they are told (requestheader-allowed-names).
var FrontProxyClient = Identity{Name: "front-proxy-client", User: "front-proxy-client"}

// PKI is the CA and the API server's serving certificate, loaded or made.
type PKI struct {
	Dir     string
	CA      *x509.Certificate
	caKey   crypto.Signer
	Serving string // path of apiserver.crt (apiserver.key beside it)
	// FrontProxyCA signs only FrontProxyClient's certificate
	// (front-proxy-client.crt and .key), kube-apiserver's
	// --requestheader-client-ca-file.
	FrontProxyCA *x509.Certificate
}

// Ensure loads the PKI in dir, creating what is missing: the CA, the
// serving certificate for hosts (names and IPs), and the client
// certificates of Admin and Components.
func Ensure(dir string, hosts []string, now time.Time) (*PKI, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &PKI{Dir: dir, Serving: filepath.Join(dir, "apiserver.crt")}
	ca, key, err := load(dir, "ca")
	if errors.Is(err, os.ErrNotExist) {
		ca, key, err = p.create("ca", caTemplate("mkube-ca"), nil, nil, now, caLifetime)
	}
	if err != nil {
		return nil, fmt.Errorf("CA: %w", err)
	}
	p.CA, p.caKey = ca, key
	serving := &x509.Certificate{Subject: pkix.Name{CommonName: "kube-apiserver"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			serving.IPAddresses = append(serving.IPAddresses, ip)
		} else {
			serving.DNSNames = append(serving.DNSNames, h)
		}
	}
	if err := p.ensure("apiserver", serving, now); err != nil {
		return nil, err
	}
	for _, id := range append([]Identity{Admin, APIServerKubeletClient}, Components...) {
		if err := p.ensure(id.Name, clientTemplate(id), now); err != nil {
			return nil, err
		}
	}
	if err := p.ensureFrontProxy(now); err != nil {
		return nil, err
	}
	return p, nil
}

// ensureFrontProxy loads or makes front-proxy-ca and front-proxy-client.
func (p *PKI) ensureFrontProxy(now time.Time) error {
	ca, key, err := load(p.Dir, "front-proxy-ca")
	if errors.Is(err, os.ErrNotExist) {
		ca, key, err = p.create("front-proxy-ca", caTemplate("front-proxy-ca"), nil, nil, now, caLifetime)
	}
	if err != nil {
		return fmt.Errorf("front-proxy CA: %w", err)
	}
	p.FrontProxyCA = ca
	if _, _, err := load(p.Dir, FrontProxyClient.Name); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: %w", FrontProxyClient.Name, err)
	}
	_, _, err = p.create(FrontProxyClient.Name, clientTemplate(FrontProxyClient), ca, key, now, certLifetime)
	return err
}

func caTemplate(cn string) *x509.Certificate {
	return &x509.Certificate{
		Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
	}
}

// EnsureClient signs a client certificate for id (CN id.User, O
// id.Groups) into <id.Name>.crt and .key, unless it is there already: a
// user of the learner's own, such as "jane" of seed 003 §十二, whose
// rights are then RBAC's to give. WriteKubeconfig makes its kubeconfig.
func (p *PKI) EnsureClient(id Identity, now time.Time) error {
	return p.ensure(id.Name, clientTemplate(id), now)
}

func clientTemplate(id Identity) *x509.Certificate {
	return &x509.Certificate{Subject: pkix.Name{CommonName: id.User, Organization: id.Groups},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
}

// ensure signs name's certificate from template unless it is already there.
func (p *PKI) ensure(name string, template *x509.Certificate, now time.Time) error {
	if _, _, err := load(p.Dir, name); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: %w", name, err)
	}
	_, _, err := p.create(name, template, p.CA, p.caKey, now, certLifetime)
	return err
}

// create makes a key and a certificate for it, signed by parent (nil: by
// itself, for a CA), and writes both.
func (p *PKI) create(name string, template, parent *x509.Certificate, parentKey crypto.Signer, now time.Time, lifetime time.Duration) (*x509.Certificate, crypto.Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	template.SerialNumber = serial
	template.NotBefore, template.NotAfter = now.Add(-time.Minute), now.Add(lifetime) // a minute of leeway for clocks
	signer := crypto.Signer(key)
	if parent == nil {
		parent = template
	} else {
		signer = parentKey
	}
	der, err := x509.CreateCertificate(rand.Reader, template, parent, key.Public(), signer)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(filepath.Join(p.Dir, name+".key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(filepath.Join(p.Dir, name+".crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

// load reads name.crt and name.key.
func load(dir, name string) (*x509.Certificate, crypto.Signer, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, name+".crt"))
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, name+".key"))
	if err != nil {
		return nil, nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, fmt.Errorf("%s.crt or %s.key is not PEM", name, name)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("%s.key is not a signing key", name)
	}
	return cert, signer, nil
}
