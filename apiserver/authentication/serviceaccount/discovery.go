package serviceaccount

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"

	jose "gopkg.in/go-jose/go-jose.v2"
)

// Service-account issuer discovery, as kube-apiserver's openidmetadata
// serves it: GET /.well-known/openid-configuration is an OpenID Connect
// provider configuration naming the issuer and where its keys are, and
// GET /openid/v1/jwks is those keys, so that a relying party outside the
// API server (a cloud's workload identity, agnhost's discovery test)
// can verify a token with any OIDC library.

// JWKSPath is where the issuer's public keys are served.
const JWKSPath = "/openid/v1/jwks"

// OpenIDConfigurationPath is the provider configuration's path.
const OpenIDConfigurationPath = "/.well-known/openid-configuration"

// openIDConfiguration is the provider configuration's fields that
// kube-apiserver fills.
type openIDConfiguration struct {
	Issuer        string   `json:"issuer"`
	JWKSURI       string   `json:"jwks_uri"`
	ResponseTypes []string `json:"response_types_supported"`
	SubjectTypes  []string `json:"subject_types_supported"`
	SigningAlgs   []string `json:"id_token_signing_alg_values_supported"`
}

// Discovery is the two documents of the issuer, made once.
type Discovery struct {
	Configuration []byte // application/json
	KeySet        []byte // application/jwk-set+json
}

// Discovery makes the issuer's documents. The keys are served at the
// issuer's own address (the issuer must be an https URL, as
// kube-apiserver requires without --service-account-jwks-uri): inside
// the cluster that is kubernetes.default.svc, the API server's Service.
func (t *Tokens) Discovery() (*Discovery, error) {
	u, err := url.Parse(t.issuer)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("service account issuer %q is not an https URL without query or fragment, where its keys could be served", t.issuer)
	}
	var set jose.JSONWebKeySet
	algs := map[string]bool{}
	for kid, keys := range t.keys {
		for _, k := range keys {
			alg, err := algorithm(k)
			if err != nil {
				return nil, err
			}
			algs[string(alg)] = true
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: k, KeyID: kid, Algorithm: string(alg), Use: "sig"})
		}
	}
	sort.Slice(set.Keys, func(i, j int) bool { return set.Keys[i].KeyID < set.Keys[j].KeyID })
	// The keys are at the server's root, whatever the issuer's path.
	jwks := url.URL{Scheme: "https", Host: u.Host, Path: JWKSPath}
	cfg := openIDConfiguration{Issuer: t.issuer, JWKSURI: jwks.String(),
		ResponseTypes: []string{"id_token"}, SubjectTypes: []string{"public"}}
	for alg := range algs {
		cfg.SigningAlgs = append(cfg.SigningAlgs, alg)
	}
	sort.Strings(cfg.SigningAlgs)
	configuration, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	keySet, err := json.Marshal(set)
	if err != nil {
		return nil, err
	}
	return &Discovery{Configuration: configuration, KeySet: keySet}, nil
}
