package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

var now = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// serve runs one request through a Logger's Handler and returns the
// events written.
func serve(t *testing.T, req Request, handler http.HandlerFunc, r *http.Request) ([]map[string]any, *httptest.ResponseRecorder) {
	t.Helper()
	var buf bytes.Buffer
	l := New(nopCloser{&buf}, clocktesting.NewFakePassiveClock(now), nil)
	w := httptest.NewRecorder()
	l.Handler(handler, func(*http.Request) Request { return req }).ServeHTTP(w, r)
	l.Close()
	var events []map[string]any
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not a JSON line: %s", sc.Text())
		}
		events = append(events, ev)
	}
	return events, w
}

func TestEachRequestIsAnAuditEventAtLevelMetadata(t *testing.T) {
	jane := authenticationv1.UserInfo{Username: "jane", Groups: []string{"system:authenticated"}}
	admin := authenticationv1.UserInfo{Username: "kubernetes-admin", Groups: []string{"system:masters", "system:authenticated"}}
	pods := &auditv1.ObjectReference{Resource: "pods", Namespace: "default", Name: "web", APIVersion: "v1"}
	tests := []struct {
		name    string
		req     Request
		handler http.HandlerFunc
		want    []string // each event, as JSON, with its auditID and timestamps
	}{
		{"a create says who made what, and the authorizer's reason", Request{Verb: "create", ObjectRef: pods},
			func(w http.ResponseWriter, r *http.Request) {
				SetUser(r.Context(), admin)
				SetDecision(r.Context(), true, `RBAC: allowed by ClusterRoleBinding "cluster-admin"`)
				w.WriteHeader(http.StatusCreated)
			},
			[]string{`{"annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":"RBAC: allowed by ClusterRoleBinding \"cluster-admin\""},` +
				`"apiVersion":"audit.k8s.io/v1","kind":"Event","level":"Metadata","objectRef":{"apiVersion":"v1","name":"web","namespace":"default","resource":"pods"},` +
				`"requestURI":"/api/v1/namespaces/default/pods","responseStatus":{"code":201,"metadata":{}},"sourceIPs":["192.0.2.1"],"stage":"ResponseComplete",` +
				`"user":{"groups":["system:masters","system:authenticated"],"username":"kubernetes-admin"},"userAgent":"kubectl/v1.32.0","verb":"create"}`}},
		{"a refusal keeps the Status' reason and message", Request{Verb: "get", ObjectRef: pods},
			func(w http.ResponseWriter, r *http.Request) {
				SetUser(r.Context(), admin)
				SetImpersonatedUser(r.Context(), jane)
				SetDecision(r.Context(), false, "")
				w.WriteHeader(http.StatusForbidden)
				w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods \"web\" is forbidden","reason":"Forbidden","code":403}`))
			},
			[]string{`{"annotations":{"authorization.k8s.io/decision":"forbid","authorization.k8s.io/reason":""},"apiVersion":"audit.k8s.io/v1",` +
				`"impersonatedUser":{"groups":["system:authenticated"],"username":"jane"},"kind":"Event","level":"Metadata",` +
				`"objectRef":{"apiVersion":"v1","name":"web","namespace":"default","resource":"pods"},"requestURI":"/api/v1/namespaces/default/pods",` +
				`"responseStatus":{"code":403,"message":"pods \"web\" is forbidden","metadata":{},"reason":"Forbidden","status":"Failure"},` +
				`"sourceIPs":["192.0.2.1"],"stage":"ResponseComplete","user":{"groups":["system:masters","system:authenticated"],"username":"kubernetes-admin"},` +
				`"userAgent":"kubectl/v1.32.0","verb":"get"}`}},
		{"a request refused before authentication has no user", Request{Verb: "list"},
			func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) },
			[]string{`{"apiVersion":"audit.k8s.io/v1","kind":"Event","level":"Metadata","requestURI":"/api/v1/namespaces/default/pods",` +
				`"responseStatus":{"code":401,"metadata":{}},"sourceIPs":["192.0.2.1"],"stage":"ResponseComplete","user":{},"userAgent":"kubectl/v1.32.0","verb":"list"}`}},
		{"a watch is logged when it starts and when it ends", Request{Verb: "watch", LongRunning: true},
			func(w http.ResponseWriter, r *http.Request) {
				w.(http.Flusher).Flush()
				AddAnnotation(r.Context(), "example.com/later", "after the start")
			},
			[]string{`{"apiVersion":"audit.k8s.io/v1","kind":"Event","level":"Metadata","requestURI":"/api/v1/namespaces/default/pods",` +
				`"responseStatus":{"code":200,"metadata":{}},"sourceIPs":["192.0.2.1"],"stage":"ResponseStarted","user":{},"userAgent":"kubectl/v1.32.0","verb":"watch"}`,
				`{"annotations":{"example.com/later":"after the start"},"apiVersion":"audit.k8s.io/v1","kind":"Event","level":"Metadata",` +
					`"requestURI":"/api/v1/namespaces/default/pods","responseStatus":{"code":200,"metadata":{}},"sourceIPs":["192.0.2.1"],` +
					`"stage":"ResponseComplete","user":{},"userAgent":"kubectl/v1.32.0","verb":"watch"}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/api/v1/namespaces/default/pods", nil)
			r.Header.Set("User-Agent", "kubectl/v1.32.0")
			events, w := serve(t, tc.req, tc.handler, r)
			if len(events) != len(tc.want) {
				t.Fatalf("%d events, want %d: %v", len(events), len(tc.want), events)
			}
			id := w.Header().Get("Audit-Id")
			for i, ev := range events {
				if ev["auditID"] != id || id == "" {
					t.Errorf("auditID %v, the response's Audit-Id %q", ev["auditID"], id)
				}
				if ev["requestReceivedTimestamp"] != "2026-12-01T10:00:00.000000Z" || ev["stageTimestamp"] != "2026-12-01T10:00:00.000000Z" {
					t.Errorf("timestamps %v %v", ev["requestReceivedTimestamp"], ev["stageTimestamp"])
				}
				delete(ev, "auditID")
				delete(ev, "requestReceivedTimestamp")
				delete(ev, "stageTimestamp")
				if got, _ := json.Marshal(ev); string(got) != tc.want[i] {
					t.Errorf("event %d\n%s\nwant\n%s", i, got, tc.want[i])
				}
			}
		})
	}
}

func TestTheClientsAuditIDIsKept(t *testing.T) {
	r := httptest.NewRequest("GET", "/healthz", nil)
	r.Header.Set("Audit-ID", "from-the-client")
	events, w := serve(t, Request{Verb: "get"}, func(http.ResponseWriter, *http.Request) {}, r)
	if len(events) != 1 || events[0]["auditID"] != "from-the-client" || w.Header().Get("Audit-Id") != "from-the-client" {
		t.Fatalf("events %v, header %q", events, w.Header().Get("Audit-Id"))
	}
}

func TestNothingIsRecordedForARequestThatIsNotAudited(t *testing.T) {
	r := httptest.NewRequest("GET", "/healthz", nil)
	SetUser(r.Context(), authenticationv1.UserInfo{Username: "nobody"}) // no record: must not panic
	AddAnnotation(r.Context(), "k", "v")
}
