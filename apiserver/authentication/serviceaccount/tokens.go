// Package serviceaccount issues and checks service-account tokens, as
// kube-apiserver's pkg/serviceaccount does. A token is a JWT, signed with
// the API server's --service-account-signing-key-file (ES256 or RS256):
//
//	header  {"alg":"ES256","kid":"<sha256 of the public key>"}
//	payload {"aud":["https://kubernetes.default.svc.cluster.local"],
//	         "exp":1764600000,"iat":1764596400,"nbf":1764596400,
//	         "iss":"https://kubernetes.default.svc.cluster.local",
//	         "jti":"6b0b…","sub":"system:serviceaccount:default:robot",
//	         "kubernetes.io":{"namespace":"default",
//	           "serviceaccount":{"name":"robot","uid":"…"},
//	           "pod":{"name":"web","uid":"…"},"node":{"name":"node01","uid":"…"}}}
//
// The TokenRequest API (serviceaccounts/<name>/token: `kubectl create
// token`, the kubelet's projected volumes) asks Issue for one. On every
// request that carries one, AuthenticateToken checks its signature,
// issuer, audience and time, then that the service account, and the pod
// or secret it is bound to, still exist with the same UID: deleting the
// pod revokes its tokens at once.
//
// Where things live:
//
//	file          what it holds
//	tokens.go     Tokens and its Config: the signing key, the issuer, the objects the checks read
//	claims.go     the JWT's private "kubernetes.io" claims; Request, Issue and Issued
//	validate.go   AuthenticateToken: signature, issuer, audience, time, and the bound objects still there
//	discovery.go  the issuer's OpenID discovery documents: /.well-known/openid-configuration and /openid/v1/jwks
package serviceaccount

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"log/slog"
	"path/filepath"

	jose "gopkg.in/go-jose/go-jose.v2"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/utils/clock"
)

// DefaultIssuer is --service-account-issuer's default: the name the API
// server has inside the cluster.
const DefaultIssuer = "https://kubernetes.default.svc.cluster.local"

// Objects is what the checks read: the API server's own storage.
type Objects interface {
	Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error)
}

// Config configures Tokens.
type Config struct {
	// SigningKey signs the tokens this server issues.
	SigningKey crypto.Signer
	// PublicKeys (--service-account-key-file) verify tokens besides the
	// signing key's own: those another API server, or an older key, signed.
	PublicKeys []crypto.PublicKey
	// Issuer is the tokens' iss (--service-account-issuer); "" is
	// DefaultIssuer.
	Issuer string
	// APIAudiences (--api-audiences) are whom a token must be for to be
	// accepted by this API server, and the audiences a TokenRequest that
	// names none gets; empty means the issuer.
	APIAudiences []string
	Clock        clock.PassiveClock // nil: the real clock
	Log          *slog.Logger       // nil: slog.Default()
}

// Tokens issues and checks the cluster's service-account tokens.
type Tokens struct {
	signer    jose.Signer
	keys      map[string][]crypto.PublicKey // by key ID, kube-apiserver's keyIDFromPublicKey
	issuer    string
	audiences []string
	clock     clock.PassiveClock
	log       *slog.Logger

	// Objects is the storage the checks read; the API server sets it to
	// its own (apiserver.New) before it serves.
	Objects Objects
}

// New makes Tokens from cfg.
func New(cfg Config) (*Tokens, error) {
	if cfg.Issuer == "" {
		cfg.Issuer = DefaultIssuer
	}
	if len(cfg.APIAudiences) == 0 {
		cfg.APIAudiences = []string{cfg.Issuer}
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	alg, err := algorithm(cfg.SigningKey.Public())
	if err != nil {
		return nil, err
	}
	kid, err := keyID(cfg.SigningKey.Public())
	if err != nil {
		return nil, err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg,
		Key: &jose.JSONWebKey{Key: cfg.SigningKey, KeyID: kid, Algorithm: string(alg), Use: "sig"}}, nil)
	if err != nil {
		return nil, fmt.Errorf("service account signer: %w", err)
	}
	t := &Tokens{signer: signer, keys: map[string][]crypto.PublicKey{}, issuer: cfg.Issuer, audiences: cfg.APIAudiences,
		clock: cfg.Clock, log: cfg.Log}
	for _, k := range append([]crypto.PublicKey{cfg.SigningKey.Public()}, cfg.PublicKeys...) {
		id, err := keyID(k)
		if err != nil {
			return nil, err
		}
		t.keys[id] = append(t.keys[id], k)
	}
	return t, nil
}

// Issuer is the tokens' iss.
func (t *Tokens) Issuer() string { return t.issuer }

// APIAudiences are whom a token must be for, for this API server.
func (t *Tokens) APIAudiences() []string { return t.audiences }

// SigningKeyName is the file the API server makes in its cert dir when
// --service-account-signing-key-file is not given, as kubeadm's sa.key.
const SigningKeyName = "sa.key"

// LoadSigningKey reads the signing key at path or, if path is "", the
// key sa.key in certDir, generating it (ECDSA P-256) at the first start
// so that a restart keeps every token good. It returns the path used.
func LoadSigningKey(path, certDir string) (crypto.Signer, string, error) {
	var data []byte
	var err error
	if path == "" {
		path = filepath.Join(certDir, SigningKeyName)
		data, _, err = keyutil.LoadOrGenerateKeyFile(path)
	} else {
		var key any
		if key, err = keyutil.PrivateKeyFromFile(path); err == nil {
			return asSigner(key, path)
		}
	}
	if err != nil {
		return nil, path, fmt.Errorf("service account signing key %s: %w", path, err)
	}
	key, err := keyutil.ParsePrivateKeyPEM(data)
	if err != nil {
		return nil, path, fmt.Errorf("service account signing key %s: %w", path, err)
	}
	return asSigner(key, path)
}

func asSigner(key any, path string) (crypto.Signer, string, error) {
	s, ok := key.(crypto.Signer)
	if !ok {
		return nil, path, fmt.Errorf("service account signing key %s: %T cannot sign", path, key)
	}
	return s, path, nil
}

// ReadPublicKeys reads the PEM files of --service-account-key-file: public
// keys, certificates or private keys (whose public halves are taken).
func ReadPublicKeys(paths []string) ([]crypto.PublicKey, error) {
	var out []crypto.PublicKey
	for _, p := range paths {
		keys, err := keyutil.PublicKeysFromFile(p)
		if err != nil {
			return nil, fmt.Errorf("service account key file %s: %w", p, err)
		}
		for _, k := range keys {
			out = append(out, k)
		}
	}
	return out, nil
}

// algorithm is the JWS algorithm kube-apiserver signs with for the key.
func algorithm(public crypto.PublicKey) (jose.SignatureAlgorithm, error) {
	switch k := public.(type) {
	case *rsa.PublicKey:
		return jose.RS256, nil
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return jose.ES256, nil
		case elliptic.P384():
			return jose.ES384, nil
		case elliptic.P521():
			return jose.ES512, nil
		}
		return "", fmt.Errorf("service account signing key: unknown elliptic curve %s", k.Curve.Params().Name)
	}
	return "", fmt.Errorf("service account signing key: %T is neither RSA nor ECDSA", public)
}

// keyID names a public key as kube-apiserver does (the kid header), so a
// token says which key signed it: the unpadded base64url SHA-256 of the
// key's DER.
func keyID(public crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(public)
	if err != nil {
		return "", fmt.Errorf("service account key: %w", err)
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}
