package customresource_test

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/internal/testserver"
	"github.com/mkube/mkube/store"
)

// hostPortWebhook is a conversion webhook in the test: v1's hostPort
// "h:p" is v2's host and port. It fails the test if asked to convert an
// object to its own version; while down, it answers a failure; lying, it
// renames the object.
type hostPortWebhook struct {
	t               *testing.T
	srv             *httptest.Server
	down, lying     atomic.Bool
	calls, refusals atomic.Int32
	toV1            atomic.Int32 // the calls converting to stable.example.com/v1
}

func newHostPortWebhook(t *testing.T) *hostPortWebhook {
	w := &hostPortWebhook{t: t}
	w.srv = httptest.NewTLSServer(http.HandlerFunc(w.serve))
	t.Cleanup(w.srv.Close)
	return w
}

func (w *hostPortWebhook) serve(rw http.ResponseWriter, r *http.Request) {
	w.calls.Add(1)
	var review apiextensionsv1.ConversionReview
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil || review.APIVersion != "apiextensions.k8s.io/v1" {
		w.t.Errorf("not a v1 ConversionReview: %s", body)
		return
	}
	if review.Request.DesiredAPIVersion == "stable.example.com/v1" {
		w.toV1.Add(1)
	}
	resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	for _, raw := range review.Request.Objects {
		u := &unstructured.Unstructured{}
		u.UnmarshalJSON(raw.Raw)
		if u.GetAPIVersion() == review.Request.DesiredAPIVersion {
			w.t.Errorf("asked to convert %s to its own version", u.GetName())
		}
		if host, ok := u.Object["host"]; ok {
			u.Object["hostPort"] = host.(string) + ":" + u.Object["port"].(string)
			delete(u.Object, "host")
			delete(u.Object, "port")
		} else if hp, ok := u.Object["hostPort"].(string); ok {
			h, p, _ := strings.Cut(hp, ":")
			u.Object["host"], u.Object["port"] = h, p
			delete(u.Object, "hostPort")
		}
		u.SetAPIVersion(review.Request.DesiredAPIVersion)
		u.SetLabels(map[string]string{"converted": "yes"})
		u.SetResourceVersion("1") // not the webhook's to change: kept as it was
		if w.lying.Load() {
			u.SetName("someone-else")
		}
		data, _ := u.MarshalJSON()
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: data})
	}
	if w.down.Load() {
		w.refusals.Add(1)
		resp = &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusFailure, Message: "down for maintenance"}}
	}
	review.Request, review.Response = nil, resp
	json.NewEncoder(rw).Encode(review)
}

// crd is a definition of E2eTestCrd at v1 (hostPort) and v2 (host,
// port), storing storage, converted by the webhook.
func (w *hostPortWebhook) crd(storage string) string {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: w.srv.Certificate().Raw})
	caBundle, _ := json.Marshal(ca)
	version := func(name, schema string) string {
		return `{"name":"` + name + `","served":true,"storage":` + map[bool]string{true: "true", false: "false"}[name == storage] +
			`,"schema":{"openAPIV3Schema":{"type":"object","properties":` + schema + `}}}`
	}
	return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"e2e-test-crds.stable.example.com"},
	"spec":{"group":"stable.example.com","scope":"Namespaced","names":{"plural":"e2e-test-crds","singular":"e2e-test-crd","kind":"E2eTestCrd","listKind":"E2eTestCrdList"},
	"versions":[` + version("v1", `{"hostPort":{"type":"string"}}`) + `,` + version("v2", `{"host":{"type":"string"},"port":{"type":"string"}}`) + `],
	"conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1","v1beta1"],"clientConfig":{"url":"` + w.srv.URL + `/crdconvert","caBundle":` + string(caBundle) + `}}}}}`
}

// A definition with a conversion webhook: objects are stored at the
// storage version and read at any served one, each converted by the
// webhook only when the versions differ; after the storage version
// changes, a list holds objects stored at both, each converted. A
// webhook that fails, or answers with another object, fails the read; a
// watch waits for the webhook instead of losing the event.
func TestAConversionWebhookConvertsBetweenVersions(t *testing.T) {
	s := testserver.StartServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	hook := newHostPortWebhook(t)
	const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	if code := s.Do(http.MethodPost, crds, "application/json", hook.crd("v1"), nil); code != http.StatusCreated {
		t.Fatalf("create the definition: %d", code)
	}
	const v1, v2 = "/apis/stable.example.com/v1/namespaces/default/e2e-test-crds", "/apis/stable.example.com/v2/namespaces/default/e2e-test-crds"
	testserver.Eventually(t, "v2 is served", func() (bool, string) {
		code := s.Do(http.MethodGet, v2, "", "", nil)
		return code == http.StatusOK, http.StatusText(code)
	})

	// Created at v1, the storage version: no call to convert it to v1
	// (v2's watch cache converts the event to v2 meanwhile, which may
	// come before or after). Read at v2: a call.
	if code := s.Do(http.MethodPost, v1, "application/json",
		`{"apiVersion":"stable.example.com/v1","kind":"E2eTestCrd","metadata":{"name":"cr-1"},"hostPort":"localhost:8080"}`, nil); code != http.StatusCreated {
		t.Fatalf("create cr-1 at v1: %d", code)
	}
	if n := hook.toV1.Load(); n != 0 {
		t.Errorf("creating at the storage version called the webhook %d times to convert to it", n)
	}
	var got unstructured.Unstructured
	if code := s.Do(http.MethodGet, v2+"/cr-1", "", "", &got); code != http.StatusOK || got.GetAPIVersion() != "stable.example.com/v2" ||
		got.Object["host"] != "localhost" || got.Object["port"] != "8080" || got.Object["hostPort"] != nil {
		t.Fatalf("cr-1 at v2: %d %v", code, got.Object)
	}
	if got.GetLabels()["converted"] != "yes" || got.GetResourceVersion() == "1" {
		t.Errorf("the webhook may change labels, not the rest of the metadata: %v", got.Object["metadata"])
	}

	// The storage version becomes v2; cr-2, created at v1, is stored at
	// v2. Both read at each version, whatever they were stored at.
	var crd apiextensionsv1.CustomResourceDefinition
	s.Do(http.MethodGet, crds+"/e2e-test-crds.stable.example.com", "", "", &crd)
	next := strings.Replace(hook.crd("v2"), `"name":"e2e-test-crds.stable.example.com"`,
		`"name":"e2e-test-crds.stable.example.com","resourceVersion":"`+crd.ResourceVersion+`"`, 1)
	if code := s.Do(http.MethodPut, crds+"/e2e-test-crds.stable.example.com", "application/json", next, nil); code != http.StatusOK {
		t.Fatalf("store v2: %d", code)
	}
	testserver.Eventually(t, "cr-2, created at v1, is stored at v2", func() (bool, string) {
		code := s.Do(http.MethodPost, v1, "application/json",
			`{"apiVersion":"stable.example.com/v1","kind":"E2eTestCrd","metadata":{"name":"cr-2"},"hostPort":"example.com:80"}`, nil)
		stored, _ := s.Store.Get(ctx, store.Key("stable.example.com/e2e-test-crds", "default", "cr-2"))
		if !strings.Contains(string(stored.Value), `"apiVersion":"stable.example.com/v2"`) {
			s.Do(http.MethodDelete, v1+"/cr-2", "", "", nil) // created before the definition was served anew
			return false, http.StatusText(code)
		}
		return true, ""
	})
	for _, tc := range []struct{ path, want string }{{v1, "localhost:8080 example.com:80"}, {v2, "localhost/8080 example.com/80"}} {
		var list unstructured.UnstructuredList
		s.Do(http.MethodGet, tc.path, "", "", &list)
		var fields []string
		for _, u := range list.Items {
			if hp, ok := u.Object["hostPort"].(string); ok {
				fields = append(fields, hp)
			} else {
				fields = append(fields, u.Object["host"].(string)+"/"+u.Object["port"].(string))
			}
		}
		if strings.Join(fields, " ") != tc.want {
			t.Errorf("list %s: %v, want %s", tc.path, fields, tc.want)
		}
	}

	// A webhook that fails, or answers with another object, fails the
	// read, in Kubernetes' words.
	var status metav1.Status
	hook.down.Store(true)
	if code := s.Do(http.MethodGet, v1+"/cr-2", "", "", &status); code != http.StatusInternalServerError ||
		status.Message != `Internal error occurred: conversion webhook for stable.example.com/v2, Kind=E2eTestCrd failed: response.result.status was 'Failure', not 'Success': down for maintenance` {
		t.Errorf("read through a failing webhook: %d %q", code, status.Message)
	}
	hook.down.Store(false)
	hook.lying.Store(true)
	if code := s.Do(http.MethodGet, v1+"/cr-2", "", "", &status); code != http.StatusInternalServerError ||
		!strings.Contains(status.Message, "returned invalid object: must have the same name: cr-2 != someone-else") {
		t.Errorf("read through a lying webhook: %d %q", code, status.Message)
	}
	hook.lying.Store(false)

	// A watch at v1 while the webhook is down gets the event once it is
	// back.
	req, _ := http.NewRequest(http.MethodGet, s.URL+v1+"?watch=1", nil)
	watchCtx, stopWatch := context.WithTimeout(ctx, 20*time.Second) // ends the watch if cr-3 never comes
	defer stopWatch()
	resp, err := http.DefaultClient.Do(req.WithContext(watchCtx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := make(chan string)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			events <- sc.Text()
		}
		close(events)
	}()
	hook.down.Store(true)
	if code := s.Do(http.MethodPost, v2, "application/json",
		`{"apiVersion":"stable.example.com/v2","kind":"E2eTestCrd","metadata":{"name":"cr-3"},"host":"h","port":"3"}`, nil); code != http.StatusCreated {
		t.Fatalf("create cr-3 at v2, the storage version: %d", code)
	}
	refused := hook.refusals.Load()
	testserver.Eventually(t, "the watch cache asks the webhook for cr-3", func() (bool, string) {
		return hook.refusals.Load() > refused, "no call"
	})
	hook.down.Store(false)
	for ev := range events {
		if strings.Contains(ev, `"name":"cr-3"`) {
			if !strings.Contains(ev, `"hostPort":"h:3"`) {
				t.Errorf("cr-3's event at v1: %s", ev)
			}
			return
		}
	}
	t.Fatal("the watch ended without cr-3")
}
