package catalog

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	jose "gopkg.in/go-jose/go-jose.v2"

	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
)

// `agnhost test-service-account-issuer-discovery --token-path P
// --audience A` is Kubernetes' OIDC discovery spec's pod: it reads a
// projected service-account token and verifies it as any OpenID Connect
// relying party would (the real one uses coreos/go-oidc): the issuer's
// /.well-known/openid-configuration, fetched from the API server with
// the pod's in-cluster credentials, names the issuer and its keys'
// jwks_uri; the token's signature must be one of those keys', its
// audience A and its time not passed. It exits 0 when the token checks
// out, else 1 (log.Fatal), having tried once more without the cluster's
// CA, as the real one falls back to external discovery.

func issuerDiscovery(ctx context.Context, p *shell.Process, args []string) (int, error) {
	fatal := func(err error) (int, error) {
		goLog(p, err.Error())
		return 1, nil
	}
	tokenPath, audience := lib.StringFlag(args, "token-path", ""), lib.StringFlag(args, "audience", "")
	raw, err := p.FS.ReadFile(tokenPath)
	if err != nil {
		return fatal(fmt.Errorf("open %s: no such file or directory", tokenPath))
	}
	goLog(p, "OK: Got token")
	goLog(p, "validating with in-cluster discovery")
	inCluster, err := lib.InClusterClient(p)
	if err != nil {
		return fatal(err)
	}
	err = validateToken(ctx, p, inCluster, string(raw), audience)
	if err == nil {
		return 0, nil
	}
	goLog(p, "failed to validate with in-cluster discovery: "+err.Error())
	goLog(p, "falling back to validating with external discovery")
	// No cluster CA and no token: the image's own roots, which do not
	// know the cluster's CA.
	external := &http.Client{Transport: lib.PodTransport(p, &tls.Config{RootCAs: x509.NewCertPool()})}
	if err := validateToken(ctx, p, external, string(raw), audience); err != nil {
		return fatal(err)
	}
	return 0, nil
}

// validateToken is the real one's validate: the unverified issuer, the
// provider's configuration from it, then the signature, audience and
// time, in go-oidc's words.
func validateToken(ctx context.Context, p *shell.Process, client *http.Client, raw, audience string) error {
	tok, err := jose.ParseSigned(raw)
	if err != nil {
		return err
	}
	var claims struct {
		Issuer   string          `json:"iss"`
		Audience json.RawMessage `json:"aud"`
		Expiry   int64           `json:"exp"`
		Kube     json.RawMessage `json:"kubernetes.io"`
	}
	if err := json.Unmarshal(tok.UnsafePayloadWithoutVerification(), &claims); err != nil {
		return fmt.Errorf("oidc: failed to unmarshal claims: %v", err)
	}
	goLog(p, "OK: got issuer "+claims.Issuer)
	goLog(p, "Full, not-validated claims: \n"+string(tok.UnsafePayloadWithoutVerification()))

	var provider struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := getJSON(ctx, client, strings.TrimSuffix(claims.Issuer, "/")+"/.well-known/openid-configuration", &provider); err != nil {
		return err
	}
	if provider.Issuer != claims.Issuer {
		return fmt.Errorf("oidc: issuer did not match the issuer returned by provider, expected %q got %q", claims.Issuer, provider.Issuer)
	}
	goLog(p, "OK: Constructed OIDC provider for issuer "+claims.Issuer)

	var keys jose.JSONWebKeySet
	if err := getJSON(ctx, client, provider.JWKSURI, &keys); err != nil {
		return fmt.Errorf("fetching keys %v", err)
	}
	verified := false
	for _, sig := range tok.Signatures {
		for _, k := range keys.Key(sig.Header.KeyID) {
			if _, err := tok.Verify(k.Key); err == nil {
				verified = true
			}
		}
	}
	if !verified {
		return fmt.Errorf("failed to verify signature: failed to verify id token signature")
	}
	var audiences []string
	if json.Unmarshal(claims.Audience, &audiences) != nil {
		var one string
		json.Unmarshal(claims.Audience, &one)
		audiences = []string{one}
	}
	if !slices.Contains(audiences, audience) {
		return fmt.Errorf("oidc: expected audience %q got %q", audience, audiences)
	}
	if expiry := time.Unix(claims.Expiry, 0); p.Clock.Now().After(expiry) {
		return fmt.Errorf("oidc: token is expired (Token Expiry: %v)", expiry)
	}
	goLog(p, "OK: Validated signature on JWT")
	goLog(p, "OK: Got valid claims from token!")
	goLog(p, "Full, validated claims: \n"+string(tok.UnsafePayloadWithoutVerification()))
	return nil
}

// getJSON GETs url and decodes its JSON body into v, as go-oidc does.
func getJSON(ctx context.Context, client *http.Client, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("unable to read response body: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("oidc: failed to decode provider discovery object: %v", err)
	}
	return nil
}
