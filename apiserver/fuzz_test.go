package apiserver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/mkube/mkube/internal/testserver"
)

// The fuzz tests send arbitrary bytes through the whole request path of a
// real server (decoding, defaulting, admission, validation, patching,
// storage) and check the API's promise for bad input: a Kubernetes
// Status with a 4xx code, never a 500 or a panic, and an object that was
// acknowledged can be read back. Their seeds run with `go test`; explore
// with e.g. `go test -fuzz FuzzCreate -fuzztime 60s ./apiserver/`.

var fuzzContentTypes = []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}

var fuzzCollections = []string{
	"/api/v1/namespaces/default/pods",
	"/apis/apps/v1/namespaces/default/deployments",
	"/api/v1/namespaces/default/services",
	"/api/v1/namespaces/default/configmaps",
	"/api/v1/nodes",
}

// checkAnswer fails on a 5xx, and on an error that is not a Status
// carrying its own code.
func checkAnswer(t *testing.T, what string, code int, body []byte) {
	t.Helper()
	if code >= 500 {
		t.Fatalf("%s: %d %s", what, code, body)
	}
	if code < 400 {
		return
	}
	var st metav1.Status
	if err := json.Unmarshal(body, &st); err != nil || st.Kind != "Status" || int(st.Code) != code || st.Status != metav1.StatusFailure {
		t.Fatalf("%s: %d with a body that is not its Status: %s", what, code, body)
	}
}

func send(t *testing.T, method, u, contentType string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		t.Skip(err) // not a request a client could send
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

func protobufPod(t testing.TB) []byte {
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "pb"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	var b bytes.Buffer
	if err := protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme).Encode(pod, &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func FuzzCreate(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`), uint8(0), uint8(0))
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec: {containers: [{name: c, image: nginx}]}\n"), uint8(1), uint8(0))
	f.Add(protobufPod(f), uint8(2), uint8(0))
	f.Add([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`), uint8(0), uint8(1))
	f.Add([]byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"type":"NodePort","ports":[{"port":80,"targetPort":"http"}]}}`), uint8(0), uint8(2))
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","generateName":"x-"},"data":{"k":"v"},"binaryData":{"b":"AAA="}}`), uint8(0), uint8(3))
	f.Add([]byte(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"spec":{"taints":[{"key":"k","effect":"NoExecute"}]}}`), uint8(0), uint8(4))
	f.Add([]byte(`{"metadata":{"name":"x"},"spec":{"containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":"1e400"}}}]}}`), uint8(0), uint8(0))
	f.Add([]byte(`{`), uint8(0), uint8(0))
	f.Add([]byte{}, uint8(2), uint8(0))
	s := testserver.StartServer(f)
	f.Fuzz(func(t *testing.T, body []byte, ct, coll uint8) {
		collection := fuzzCollections[int(coll)%len(fuzzCollections)]
		code, out := send(t, http.MethodPost, s.URL+collection, fuzzContentTypes[int(ct)%len(fuzzContentTypes)], body)
		checkAnswer(t, "create", code, out)
		if code != http.StatusCreated {
			return
		}
		// Acknowledged: it must be there to read, then goes so the store
		// stays small.
		var created metav1.PartialObjectMetadata
		if err := json.Unmarshal(out, &created); err != nil || created.Name == "" {
			t.Fatalf("201 with an unreadable object: %s", out)
		}
		if code, got := send(t, http.MethodGet, s.URL+collection+"/"+url.PathEscape(created.Name), "", nil); code != http.StatusOK {
			t.Fatalf("created %s, then GET: %d %s", created.Name, code, got)
		}
		send(t, http.MethodDelete, s.URL+collection+"/"+url.PathEscape(created.Name)+"?gracePeriodSeconds=0", "", nil)
	})
}

var fuzzPatchTypes = []string{"application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml"}

// FuzzPatch applies arbitrary patches of each type to one pod, as dry
// runs, so that every input meets the same object.
func FuzzPatch(f *testing.F) {
	f.Add([]byte(`[{"op":"add","path":"/metadata/labels/x","value":"y"}]`), uint8(0))
	f.Add([]byte(`[{"op":"move","from":"/spec/containers/0","path":"/spec/containers/1"}]`), uint8(0))
	f.Add([]byte(`{"metadata":{"labels":{"x":null}},"spec":{"activeDeadlineSeconds":-1}}`), uint8(1))
	f.Add([]byte(`{"spec":{"containers":[{"name":"c","$patch":"delete"}],"$setElementOrder/containers":[{"name":"z"}]}}`), uint8(2))
	f.Add([]byte(`{"spec":{"tolerations":[{"$retainKeys":["key"],"key":"k"}]}}`), uint8(2))
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: base}\nspec: {containers: [{name: c, image: busybox}]}\n"), uint8(3))
	f.Add([]byte(`null`), uint8(1))
	s := testserver.StartServer(f)
	pods := s.URL + "/api/v1/namespaces/default/pods"
	if code, out := send(&testing.T{}, http.MethodPost, pods, "application/json",
		[]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"base","labels":{"app":"a"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`)); code != http.StatusCreated {
		f.Fatalf("create the base pod: %d %s", code, out)
	}
	f.Fuzz(func(t *testing.T, patch []byte, typ uint8) {
		code, out := send(t, http.MethodPatch, pods+"/base?dryRun=All&fieldManager=fuzz", fuzzPatchTypes[int(typ)%len(fuzzPatchTypes)], patch)
		checkAnswer(t, "patch", code, out)
		if code == http.StatusOK {
			var pod corev1.Pod
			if err := json.Unmarshal(out, &pod); err != nil || pod.Name != "base" {
				t.Fatalf("200 with %s (%v)", out, err)
			}
		}
	})
}

// FuzzListQuery sends arbitrary selectors, continue tokens, limits and
// resourceVersions to a list.
func FuzzListQuery(f *testing.F) {
	f.Add("app=web,tier!=db", "status.phase=Running", "", "1", "")
	f.Add("app in (a,b),!x", "spec.nodeName=", "eyJydiI6MSwiYWZ0ZXIiOiJ4In0", "2", "0")
	f.Add("a=(", "metadata.name", "!!!", "-1", "notanumber")
	f.Add("", "", "eyJydiI6LTEsImFmdGVyIjoiXHUwMDAwIn0", "1", "999999999")
	s := testserver.StartServer(f)
	for _, name := range []string{"a", "b", "c"} {
		send(&testing.T{}, http.MethodPost, s.URL+"/api/v1/namespaces/default/configmaps", "application/json",
			[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"`+name+`","labels":{"app":"web"}}}`))
	}
	f.Fuzz(func(t *testing.T, labelSel, fieldSel, cont, limit, rv string) {
		q := url.Values{"labelSelector": {labelSel}, "fieldSelector": {fieldSel}, "continue": {cont}, "limit": {limit}, "resourceVersion": {rv}}
		code, out := send(t, http.MethodGet, s.URL+"/api/v1/pods?"+q.Encode(), "", nil)
		checkAnswer(t, "list pods", code, out)
		code, out = send(t, http.MethodGet, s.URL+"/api/v1/namespaces/default/configmaps?"+q.Encode(), "", nil)
		checkAnswer(t, "list configmaps", code, out)
	})
}

// FuzzAccept sends arbitrary Accept headers to a get and a list: the
// answer is a Status (406 when nothing accepted can be made), or an
// object in one of the server's media types that client-go's decoders
// read back.
func FuzzAccept(f *testing.F) {
	f.Add("application/vnd.kubernetes.protobuf,application/json")
	f.Add("application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
	f.Add("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
	f.Add("application/yaml;q=0.5, */*;q=0.1")
	f.Add("text/html;;,;=,application/*;stream=watch")
	s := testserver.StartServer(f)
	send(&testing.T{}, http.MethodPost, s.URL+"/api/v1/namespaces/default/configmaps", "application/json",
		[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}`))
	sch := runtime.NewScheme() // client-go's, and Tables
	clientgoscheme.AddToScheme(sch)
	metav1.AddMetaToScheme(sch)
	decoder := serializer.NewCodecFactory(sch).UniversalDeserializer()
	f.Fuzz(func(t *testing.T, accept string) {
		for _, path := range []string{"/api/v1/namespaces/default/configmaps/a", "/api/v1/namespaces/default/configmaps"} {
			req, err := http.NewRequest(http.MethodGet, s.URL+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Accept", accept)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Skip(err) // a header net/http will not send
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			checkAnswer(t, "GET "+path, resp.StatusCode, data)
			if resp.StatusCode != http.StatusOK {
				continue
			}
			switch ct := resp.Header.Get("Content-Type"); ct {
			case "application/json", "application/vnd.kubernetes.protobuf":
				if _, _, err := decoder.Decode(data, nil, nil); err != nil {
					t.Fatalf("GET %s, Accept %q: a %s answer client-go cannot decode: %v", path, accept, ct, err)
				}
			case "application/yaml":
			default:
				t.Fatalf("GET %s, Accept %q: answered in %q", path, accept, ct)
			}
		}
	})
}
