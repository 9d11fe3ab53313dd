package core_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/internal/testserver"
)

const robotPath = "/api/v1/namespaces/default/serviceaccounts/robot"

// tokenRequest is a TokenRequest body with spec.
func tokenRequest(spec string) string {
	return `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":` + spec + `}`
}

// claims decodes a JWT's payload, unverified.
func claims(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	data, err := base64.RawURLEncoding.DecodeString(parts[1])
	var out map[string]any
	if err != nil || json.Unmarshal(data, &out) != nil {
		t.Fatalf("payload %q: %v", data, err)
	}
	return out
}

func TestTokenRequestsAreAnsweredAsKubernetesAnswersThem(t *testing.T) {
	s := testserver.StartServer(t)
	var sa corev1.ServiceAccount
	if code := s.Do("POST", "/api/v1/namespaces/default/serviceaccounts", "application/json",
		`{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"robot"}}`, &sa); code != http.StatusCreated {
		t.Fatalf("create robot: %d", code)
	}
	var pod corev1.Pod
	if code := s.Do("POST", "/api/v1/namespaces/default/pods", "application/json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},
		"spec":{"serviceAccountName":"robot","containers":[{"name":"c","image":"nginx"}]}}`, &pod); code != http.StatusCreated {
		t.Fatalf("create web: %d", code)
	}
	if code := s.Do("POST", "/api/v1/namespaces/default/pods", "application/json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"other"},
		"spec":{"containers":[{"name":"c","image":"nginx"}]}}`, nil); code != http.StatusCreated {
		t.Fatalf("create other: %d", code)
	}
	tests := []struct {
		name, path, body string
		code             int
		message          string         // of the error Status
		claims           map[string]any // some of the token's claims
		expiresIn        time.Duration  // status.expirationTimestamp - creation
	}{
		{name: "a token is for the API server, for an hour", path: robotPath + "/token", body: tokenRequest(`{}`), code: http.StatusCreated,
			claims:    map[string]any{"sub": "system:serviceaccount:default:robot", "iss": "https://kubernetes.default.svc.cluster.local"},
			expiresIn: time.Hour},
		{name: "for the audience and the time asked for", path: robotPath + "/token",
			body: tokenRequest(`{"audiences":["vault"],"expirationSeconds":7200}`), code: http.StatusCreated,
			claims: map[string]any{"aud": []any{"vault"}}, expiresIn: 2 * time.Hour},
		{name: "bound to a pod, it names the pod", path: robotPath + "/token",
			body: tokenRequest(`{"boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":"web"}}`), code: http.StatusCreated,
			claims:    map[string]any{"kubernetes.io": map[string]any{"namespace": "default", "pod": map[string]any{"name": "web", "uid": string(pod.UID)}, "serviceaccount": map[string]any{"name": "robot", "uid": string(sa.UID)}}},
			expiresIn: time.Hour},
		{name: "the kubelet's 3607 s is extended to a year, with a warning after", path: robotPath + "/token",
			body: tokenRequest(`{"expirationSeconds":3607,"boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":"web"}}`), code: http.StatusCreated,
			expiresIn: 3607 * time.Second},
		{name: "less than ten minutes is refused", path: robotPath + "/token", body: tokenRequest(`{"expirationSeconds":60}`),
			code:    http.StatusUnprocessableEntity,
			message: `TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes`},
		{name: "a service account that does not exist is 404", path: "/api/v1/namespaces/default/serviceaccounts/ghost/token",
			body: tokenRequest(`{}`), code: http.StatusNotFound, message: `serviceaccounts "ghost" not found`},
		{name: "a pod of another service account is refused", path: robotPath + "/token",
			body: tokenRequest(`{"boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":"other"}}`), code: http.StatusBadRequest,
			message: `cannot bind token for serviceaccount "robot" to pod running with different serviceaccount name.`},
		{name: "a kind tokens cannot be bound to is refused", path: robotPath + "/token",
			body: tokenRequest(`{"boundObjectRef":{"kind":"ConfigMap","apiVersion":"v1","name":"x"}}`), code: http.StatusBadRequest,
			message: `cannot bind token to object of type /v1, Kind=ConfigMap`},
		{name: "a pod that is not there is 404", path: robotPath + "/token",
			body: tokenRequest(`{"boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":"gone"}}`), code: http.StatusNotFound,
			message: `pods "gone" not found`},
		{name: "a pod of another UID is a conflict", path: robotPath + "/token",
			body: tokenRequest(`{"boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":"web","uid":"not-its-uid"}}`), code: http.StatusConflict,
			message: `Operation cannot be fulfilled on Pod "web": the UID in the bound object reference (not-its-uid) does not match the UID in record. The object might have been deleted and then recreated`},
		{name: "the name in the body must be the service account's", path: robotPath + "/token",
			body: `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","metadata":{"name":"other"},"spec":{}}`,
			code: http.StatusUnprocessableEntity, message: `metadata.name: Invalid value: "other": must match the service account name if specified`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var raw json.RawMessage
			code := s.Do("POST", tc.path, "application/json", tc.body, &raw)
			if code != tc.code {
				t.Fatalf("code %d, want %d: %s", code, tc.code, raw)
			}
			if tc.message != "" {
				var st metav1.Status
				if json.Unmarshal(raw, &st); !strings.Contains(st.Message, tc.message) {
					t.Fatalf("message %q, want %q", st.Message, tc.message)
				}
				return
			}
			var out authenticationv1.TokenRequest
			if err := json.Unmarshal(raw, &out); err != nil || out.Kind != "TokenRequest" || out.Name != "robot" {
				t.Fatalf("answer %s: %v", raw, err)
			}
			c := claims(t, out.Status.Token)
			for k, v := range tc.claims {
				got, _ := json.Marshal(c[k])
				want, _ := json.Marshal(v)
				if k == "kubernetes.io" {
					delete(c[k].(map[string]any), "node") // the pod is not on a node
					got, _ = json.Marshal(c[k])
				}
				if string(got) != string(want) {
					t.Errorf("claim %s: %s, want %s", k, got, want)
				}
			}
			if got := out.Status.ExpirationTimestamp.Sub(out.CreationTimestamp.Time); got != tc.expiresIn {
				t.Errorf("expires in %v, want %v", got, tc.expiresIn)
			}
			k, _ := c["kubernetes.io"].(map[string]any)
			lifetime := time.Duration(c["exp"].(float64)-c["iat"].(float64)) * time.Second
			if tc.expiresIn == 3607*time.Second {
				if lifetime != 365*24*time.Hour || k["warnafter"].(float64)-c["iat"].(float64) != 3607 {
					t.Errorf("exp - iat %v, warnafter %v: want a year, and a warning after 3607 s", lifetime, k["warnafter"])
				}
			} else if lifetime != tc.expiresIn || k["warnafter"] != nil {
				t.Errorf("exp - iat %v, warnafter %v; want %v and none", lifetime, k["warnafter"], tc.expiresIn)
			}
		})
	}
}
