package serviceaccount

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

var now = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// fakeObjects is the API server's storage: objects by resource and key.
type fakeObjects map[string]runtime.Object

func (f fakeObjects) Get(_ context.Context, gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error) {
	if obj, ok := f[gvr.Resource+"/"+ns+"/"+name]; ok {
		return obj, nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func newTokens(t testing.TB, cfg Config, clk *clocktesting.FakePassiveClock, objs fakeObjects) *Tokens {
	t.Helper()
	if cfg.SigningKey == nil {
		cfg.SigningKey = newKey(t)
	}
	cfg.Clock = clk
	tokens, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tokens.Objects = objs
	return tokens
}

func objectMeta(name, uid string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default", UID: k8stypes.UID(uid)}
}

func TestAServiceAccountTokenIsBelievedWhileWhatItNamesExists(t *testing.T) {
	robot := &corev1.ServiceAccount{ObjectMeta: objectMeta("robot", "sa-1")}
	web := &corev1.Pod{ObjectMeta: objectMeta("web", "pod-1"), Spec: corev1.PodSpec{ServiceAccountName: "robot", NodeName: "node01"}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node01", UID: "node-1"}}
	secret := &corev1.Secret{ObjectMeta: objectMeta("robot-token", "secret-1")}
	objects := func() fakeObjects {
		return fakeObjects{"serviceaccounts/default/robot": robot, "pods/default/web": web, "nodes//node01": node,
			"secrets/default/robot-token": secret}
	}
	hour := int64(3600)
	otherKey := newKey(t)
	tests := []struct {
		name      string
		req       Request
		issuer    *Config // signs with this configuration instead
		tamper    func(token string) string
		change    func(objs fakeObjects)
		at        time.Duration // after issuing
		audiences []string      // asked for; nil: the API server's
		ok        bool          // believed
		err       string        // else why not ("" for not ours)
		extra     map[string]string
	}{
		{name: "a pod-bound token names the pod and its node", req: Request{Pod: web, Node: node}, ok: true,
			extra: map[string]string{"authentication.kubernetes.io/pod-name": "web", "authentication.kubernetes.io/pod-uid": "pod-1",
				"authentication.kubernetes.io/node-name": "node01", "authentication.kubernetes.io/node-uid": "node-1"}},
		{name: "a token is good until it expires", req: Request{}, at: 59 * time.Minute, ok: true},
		{name: "and for a minute's leeway after", req: Request{}, at: time.Hour + 50*time.Second, ok: true},
		{name: "an expired token is refused", req: Request{}, at: time.Hour + 2*time.Minute, err: "service account token has expired"},
		{name: "a token for another audience is refused", req: Request{Audiences: []string{"vault"}},
			err: `token audiences ["vault"] is invalid for the target audiences ["https://kubernetes.default.svc.cluster.local"]`},
		{name: "a token for the audience asked for is believed", req: Request{Audiences: []string{"vault"}}, audiences: []string{"vault"}, ok: true},
		{name: "another issuer's token is not this authenticator's", req: Request{}, issuer: &Config{Issuer: "https://elsewhere"}},
		{name: "a token signed by an unknown key is refused", req: Request{}, issuer: &Config{SigningKey: otherKey},
			err: "invalid signature, no keys found"},
		{name: "a token whose payload was changed is refused", req: Request{}, tamper: func(tok string) string {
			parts := strings.Split(tok, ".")
			payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
			payload = []byte(strings.Replace(string(payload), `system:serviceaccount:default:robot`, `system:serviceaccount:kube-system:robot`, 1))
			return parts[0] + "." + base64.RawURLEncoding.EncodeToString(payload) + "." + parts[2]
		}, err: "error in cryptographic primitive"},
		{name: "a token whose signature was changed is refused", req: Request{}, tamper: func(tok string) string {
			sig := []byte(tok[strings.LastIndex(tok, ".")+1:])
			// Another base64url letter, never an invalid byte (that would be a decoding error,
			// not a bad signature): flipping a bit turned 'z' into '{' one run in twenty.
			if sig[3] == 'A' {
				sig[3] = 'B'
			} else {
				sig[3] = 'A'
			}
			return tok[:strings.LastIndex(tok, ".")+1] + string(sig)
		}, err: "error in cryptographic primitive"},
		{name: "a deleted pod's token is invalidated", req: Request{Pod: web, Node: node},
			change: func(o fakeObjects) { delete(o, "pods/default/web") }, err: "service account token has been invalidated"},
		{name: "a pod being deleted for more than the leeway invalidates it", req: Request{Pod: web},
			change: func(o fakeObjects) {
				p := web.DeepCopy()
				p.DeletionTimestamp = &metav1.Time{Time: now.Add(-2 * time.Minute)}
				o["pods/default/web"] = p
			}, err: "service account token has been invalidated"},
		{name: "a pod recreated under the same name does not vouch for the old one's token", req: Request{Pod: web},
			change: func(o fakeObjects) { p := web.DeepCopy(); p.UID = "pod-2"; o["pods/default/web"] = p },
			err:    "pod UID (pod-2) does not match service account pod ref claim (pod-1)"},
		{name: "a deleted service account's token is refused", req: Request{},
			change: func(o fakeObjects) { delete(o, "serviceaccounts/default/robot") }, err: `serviceaccounts "robot" not found`},
		{name: "a recreated service account's token is refused", req: Request{},
			change: func(o fakeObjects) { sa := robot.DeepCopy(); sa.UID = "sa-2"; o["serviceaccounts/default/robot"] = sa },
			err:    "service account UID (sa-2) does not match claim (sa-1)"},
		{name: "a secret-bound token dies with the secret", req: Request{Secret: secret},
			change: func(o fakeObjects) { delete(o, "secrets/default/robot-token") }, err: "service account token has been invalidated"},
		{name: "a node-bound token lives with the node", req: Request{Node: node}, ok: true,
			extra: map[string]string{"authentication.kubernetes.io/node-name": "node01"}},
		{name: "and dies with it", req: Request{Node: node},
			change: func(o fakeObjects) { delete(o, "nodes//node01") }, err: "service account token has been invalidated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(now)
			objs := objects()
			tokens := newTokens(t, Config{}, clk, objs)
			signer := tokens
			if tc.issuer != nil {
				signer = newTokens(t, *tc.issuer, clk, objs)
			}
			req := tc.req
			req.ServiceAccount, req.ExpirationSeconds = robot, hour
			if req.Audiences == nil {
				req.Audiences = tokens.APIAudiences()
			}
			issued, err := signer.Issue(req)
			if err != nil {
				t.Fatal(err)
			}
			token := issued.Token
			if tc.tamper != nil {
				token = tc.tamper(token)
			}
			if tc.change != nil {
				tc.change(objs)
			}
			clk.SetTime(now.Add(tc.at))
			resp, ok, err := tokens.AuthenticateToken(context.Background(), token, tc.audiences)
			switch {
			case tc.ok && (!ok || err != nil):
				t.Fatalf("not believed: %v", err)
			case !tc.ok && ok:
				t.Fatalf("believed: %+v", resp.User)
			case !tc.ok && tc.err == "" && err != nil:
				t.Fatalf("got %v, want the token left to other authenticators", err)
			case !tc.ok && tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("got %v, want %q", err, tc.err)
			}
			if !tc.ok {
				return
			}
			u := resp.User
			if u.Username != "system:serviceaccount:default:robot" || u.UID != "sa-1" ||
				!slices.Equal(u.Groups, []string{"system:serviceaccounts", "system:serviceaccounts:default"}) {
				t.Errorf("user %+v", u)
			}
			if got := u.Extra["authentication.kubernetes.io/credential-id"]; len(got) != 1 || got[0] != "JTI="+issued.ID {
				t.Errorf("credential-id %v, want JTI=%s", got, issued.ID)
			}
			for k, v := range tc.extra {
				if got := u.Extra[k]; len(got) != 1 || got[0] != v {
					t.Errorf("extra %s: %v, want %s", k, got, v)
				}
			}
		})
	}
}

func TestATokenCarriesKubernetesClaims(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(now)
	tokens := newTokens(t, Config{}, clk, fakeObjects{})
	robot := &corev1.ServiceAccount{ObjectMeta: objectMeta("robot", "sa-1")}
	web := &corev1.Pod{ObjectMeta: objectMeta("web", "pod-1")}
	issued, err := tokens.Issue(Request{ServiceAccount: robot, Pod: web, Node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node01"}},
		Audiences: []string{DefaultIssuer}, ExpirationSeconds: 365 * 24 * 3600, WarnAfterSeconds: 3607})
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(issued.Token, ".")
	header, _ := base64.RawURLEncoding.DecodeString(parts[0])
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var h map[string]any
	var p map[string]any
	if json.Unmarshal(header, &h) != nil || json.Unmarshal(payload, &p) != nil {
		t.Fatalf("not JSON: %s %s", header, payload)
	}
	if h["alg"] != "ES256" || h["kid"] == "" {
		t.Errorf("header %s", header)
	}
	want := `{"aud":["https://kubernetes.default.svc.cluster.local"],"exp":1827655200,"iat":1796119200,"iss":"https://kubernetes.default.svc.cluster.local",` +
		`"jti":"` + issued.ID + `","kubernetes.io":{"namespace":"default","node":{"name":"node01"},"pod":{"name":"web","uid":"pod-1"},` +
		`"serviceaccount":{"name":"robot","uid":"sa-1"},"warnafter":1796122807},"nbf":1796119200,"sub":"system:serviceaccount:default:robot"}`
	if got, _ := json.Marshal(p); string(got) != want {
		t.Errorf("payload\n%s\nwant\n%s", got, want)
	}
}

// A stale kubelet token (past its warnafter) is still believed.
func TestATokenPastItsWarnAfterIsStillGood(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(now)
	robot := &corev1.ServiceAccount{ObjectMeta: objectMeta("robot", "sa-1")}
	web := &corev1.Pod{ObjectMeta: objectMeta("web", "pod-1")}
	tokens := newTokens(t, Config{}, clk, fakeObjects{"serviceaccounts/default/robot": robot, "pods/default/web": web})
	issued, err := tokens.Issue(Request{ServiceAccount: robot, Pod: web, Audiences: tokens.APIAudiences(),
		ExpirationSeconds: 365 * 24 * 3600, WarnAfterSeconds: 3607})
	if err != nil {
		t.Fatal(err)
	}
	clk.SetTime(now.Add(2 * time.Hour))
	if _, ok, err := tokens.AuthenticateToken(context.Background(), issued.Token, nil); !ok || err != nil {
		t.Fatalf("a stale token: %v %v", ok, err)
	}
}

// FuzzAuthenticateToken: whatever a client sends as a token, the
// authenticator does not panic, and believes only what it signed.
func FuzzAuthenticateToken(f *testing.F) {
	clk := clocktesting.NewFakePassiveClock(now)
	robot := &corev1.ServiceAccount{ObjectMeta: objectMeta("robot", "sa-1")}
	tokens := newTokens(f, Config{}, clk, fakeObjects{"serviceaccounts/default/robot": robot})
	issued, err := tokens.Issue(Request{ServiceAccount: robot, Audiences: tokens.APIAudiences(), ExpirationSeconds: 3600})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(issued.Token)
	f.Add("")
	f.Add("a.b.c")
	f.Add(`{"payload":"e30","signatures":[]}`)
	f.Add("eyJhbGciOiJub25lIn0.eyJpc3MiOiJodHRwczovL2t1YmVybmV0ZXMuZGVmYXVsdC5zdmMuY2x1c3Rlci5sb2NhbCJ9.")
	f.Fuzz(func(t *testing.T, token string) {
		resp, ok, err := tokens.AuthenticateToken(context.Background(), token, nil)
		if ok && (err != nil || resp.User.Username != "system:serviceaccount:default:robot") {
			t.Fatalf("believed %q as %+v (%v)", token, resp.User, err)
		}
	})
}
