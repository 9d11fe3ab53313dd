package apiserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/registry"
	"github.com/mkube/mkube/apiserver/storageformat"
	"github.com/mkube/mkube/internal/testserver"
	"github.com/mkube/mkube/store"
)

// storedValue is the value of the one key in etcd that ends with suffix
// (keys are /registry/<resource>/<namespace>/<name>, a custom resource's
// resource being <group>/<plural>).
func storedValue(t *testing.T, st *store.Store, suffix string) []byte {
	t.Helper()
	resp, err := st.Client().Get(context.Background(), "/registry/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range resp.Kvs {
		if strings.HasSuffix(string(kv.Key), suffix) {
			return kv.Value
		}
	}
	t.Fatalf("no key in etcd ends with %s", suffix)
	return nil
}

// envelopeKind is the apiVersion and kind a protobuf value's
// runtime.Unknown names.
func envelopeKind(t *testing.T, value []byte) string {
	t.Helper()
	var unk runtime.Unknown
	if !storageformat.IsProtobuf(value) || unk.Unmarshal(value[4:]) != nil {
		t.Fatalf("not a protobuf value: %q", value)
	}
	return unk.APIVersion + " " + unk.Kind
}

// A second API server on the same etcd, writing in another format: what
// a server restarted on its data directory with the other
// --storage-media-type is.
func startServerOn(t *testing.T, st *store.Store, format storageformat.MediaType) *httptest.Server {
	t.Helper()
	srv := apiserver.New(apiserver.Config{Store: st, Registry: registry.New(), StorageMediaType: format, Log: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return hs
}

func do(t *testing.T, url, method, path, contentType, body string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(method, url+path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

// With --storage-media-type protobuf, a built-in kind is stored as
// kube-apiserver stores it; a server writing JSON on the same etcd reads
// it, and its JSON write is read by the protobuf server, in a GET, a
// LIST and a watch: the format is in each value, whatever the flag says.
func TestObjectsWrittenInOneFormatAreReadInTheOther(t *testing.T) {
	a := testserver.StartServer(t, func(c *apiserver.Config) { c.StorageMediaType = storageformat.Protobuf })
	b := startServerOn(t, a.Store, storageformat.JSON)
	const deployments = "/apis/apps/v1/namespaces/default/deployments"
	var created appsv1.Deployment
	if code := a.Do("POST", deployments, "application/json", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
		"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`, &created); code != 201 {
		t.Fatalf("create through the protobuf server: %d", code)
	}
	if got := envelopeKind(t, storedValue(t, a.Store, "/deployments/default/web")); got != "apps/v1 Deployment" {
		t.Errorf("the protobuf server stored an envelope of %s", got)
	}

	var read appsv1.Deployment
	if code := do(t, b.URL, "GET", deployments+"/web", "", "", &read); code != 200 || *read.Spec.Replicas != 2 || read.UID != created.UID || read.ResourceVersion != created.ResourceVersion {
		t.Fatalf("the JSON server reads the protobuf value: %d %+v", code, read.ObjectMeta)
	}

	// The protobuf server watches from its write; the JSON server writes.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", a.URL+deployments+"?watch=1&resourceVersion="+created.ResourceVersion, nil)
	watch, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Body.Close()
	if code := do(t, b.URL, "PATCH", deployments+"/web", "application/merge-patch+json", `{"metadata":{"labels":{"written-by":"json"}}}`, nil); code != 200 {
		t.Fatalf("patch through the JSON server: %d", code)
	}
	value := storedValue(t, a.Store, "/deployments/default/web")
	if storageformat.IsProtobuf(value) || !json.Valid(value) || !strings.Contains(string(value), `"kind":"Deployment"`) {
		t.Errorf("the JSON server's write is not JSON: %q", value)
	}
	line, err := bufio.NewReader(watch.Body).ReadString('\n')
	var ev struct {
		Type   string
		Object appsv1.Deployment
	}
	if err != nil || json.Unmarshal([]byte(line), &ev) != nil || ev.Type != "MODIFIED" || ev.Object.Labels["written-by"] != "json" {
		t.Errorf("the protobuf server's watch after the JSON write: %v %q", err, line)
	}
	var list appsv1.DeploymentList
	if code := a.Do("GET", deployments, "", "", &list); code != 200 || len(list.Items) != 1 || list.Items[0].Labels["written-by"] != "json" {
		t.Errorf("the protobuf server lists the JSON value: %d %+v", code, list.Items)
	}
	if code := a.Do("PATCH", deployments+"/web", "application/merge-patch+json", `{"metadata":{"labels":{"written-by":"protobuf"}}}`, nil); code != 200 {
		t.Fatalf("patch through the protobuf server: %d", code)
	}
	if !storageformat.IsProtobuf(storedValue(t, a.Store, "/deployments/default/web")) {
		t.Error("the protobuf server's next write did not store protobuf again")
	}
}

// A kind served through another's storage (StoredAs: events.k8s.io/v1
// Events are core/v1 Events in etcd) is stored as the stored kind's
// protobuf, as Kubernetes stores it; a custom resource, which has no
// protobuf encoding, stays JSON, though its definition is protobuf.
func TestProtobufStorageOfConvertedKindsAndCustomResources(t *testing.T) {
	s := testserver.StartServer(t, func(c *apiserver.Config) { c.StorageMediaType = storageformat.Protobuf })
	if code := s.Do("POST", "/apis/events.k8s.io/v1/namespaces/default/events", "application/json", `{"apiVersion":"events.k8s.io/v1","kind":"Event",
		"metadata":{"name":"ev"},"eventTime":"2026-12-08T01:00:00.000000Z","reportingController":"test","reportingInstance":"test-1","action":"Test","reason":"Tested","regarding":{"kind":"Pod","name":"p","namespace":"default"},"type":"Normal"}`, nil); code != 201 {
		t.Fatalf("create an events.k8s.io/v1 Event: %d", code)
	}
	if got := envelopeKind(t, storedValue(t, s.Store, "/events/default/ev")); got != "v1 Event" {
		t.Errorf("the Event is stored as %s, want v1 Event", got)
	}
	var core corev1.Event
	if code := s.Do("GET", "/api/v1/namespaces/default/events/ev", "", "", &core); code != 200 || core.Reason != "Tested" {
		t.Errorf("read back as a core/v1 Event: %d %+v", code, core)
	}

	const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	if code := s.Do("POST", crds, "application/json", `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"crontabs.stable.example.com"},
		"spec":{"group":"stable.example.com","scope":"Namespaced","names":{"plural":"crontabs","singular":"crontab","kind":"CronTab"},
		"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`, nil); code != 201 {
		t.Fatalf("create the definition: %d", code)
	}
	if got := envelopeKind(t, storedValue(t, s.Store, "/customresourcedefinitions/crontabs.stable.example.com")); got != "apiextensions.k8s.io/v1 CustomResourceDefinition" {
		t.Errorf("the definition is stored as %s", got)
	}
	testserver.Eventually(t, "crontabs are Established", func() (bool, string) {
		var crd apiextensionsv1.CustomResourceDefinition
		s.Do("GET", crds+"/crontabs.stable.example.com", "", "", &crd)
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established {
				return c.Status == apiextensionsv1.ConditionTrue, c.Message
			}
		}
		return false, "no Established condition"
	})
	const crontabs = "/apis/stable.example.com/v1/namespaces/default/crontabs"
	if code := s.Do("POST", crontabs, "application/json", `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"tab"},"spec":{"cronSpec":"* * * * */5"}}`, nil); code != 201 {
		t.Fatalf("create a CronTab: %d", code)
	}
	value := storedValue(t, s.Store, "/crontabs/default/tab")
	if storageformat.IsProtobuf(value) || !strings.Contains(string(value), `"cronSpec":"* * * * */5"`) {
		t.Errorf("the custom resource is not stored as JSON: %q", value)
	}
	var got map[string]any
	if code := s.Do("GET", crontabs+"/tab", "", "", &got); code != 200 || got["spec"].(map[string]any)["cronSpec"] != "* * * * */5" {
		t.Errorf("read the CronTab back: %d %v", code, got)
	}
}
