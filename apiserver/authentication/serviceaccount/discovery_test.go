package serviceaccount

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	jose "gopkg.in/go-jose/go-jose.v2"
)

// The issuer's discovery names it and its keys' URL, and the key set
// holds every key that verifies tokens, by the kid the tokens carry, so
// a relying party verifies a token with the set alone.
func TestDiscoveryLetsARelyingPartyVerifyATokenAlone(t *testing.T) {
	older, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakePassiveClock(now)
	tokens := newTokens(t, Config{PublicKeys: []crypto.PublicKey{&older.PublicKey}}, clk, fakeObjects{})
	d, err := tokens.Discovery()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"issuer":"https://kubernetes.default.svc.cluster.local","jwks_uri":"https://kubernetes.default.svc.cluster.local/openid/v1/jwks",` +
		`"response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["ES256","RS256"]}`
	if string(d.Configuration) != want {
		t.Errorf("configuration:\n%s\nwant\n%s", d.Configuration, want)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(d.KeySet, &set); err != nil || len(set.Keys) != 2 {
		t.Fatalf("key set %s: %v", d.KeySet, err)
	}
	for _, k := range set.Keys {
		if k.Use != "sig" || k.KeyID == "" || !k.IsPublic() {
			t.Errorf("key %+v: want a public signing key with its kid", k)
		}
	}

	robot := &corev1.ServiceAccount{ObjectMeta: objectMeta("robot", "sa-1")}
	issued, err := tokens.Issue(Request{ServiceAccount: robot, Audiences: []string{"vault"}, ExpirationSeconds: 600})
	if err != nil {
		t.Fatal(err)
	}
	sig, err := jose.ParseSigned(issued.Token)
	if err != nil {
		t.Fatal(err)
	}
	keys := set.Key(sig.Signatures[0].Header.KeyID)
	if len(keys) != 1 {
		t.Fatalf("the key set has %d keys of the token's kid %q", len(keys), sig.Signatures[0].Header.KeyID)
	}
	if _, err := sig.Verify(keys[0].Key); err != nil {
		t.Errorf("the token does not verify with its key from the set: %v", err)
	}

	if _, err := newTokens(t, Config{Issuer: "mkube"}, clk, fakeObjects{}).Discovery(); err == nil {
		t.Error("an issuer that is not an https URL has discovery")
	}
}
