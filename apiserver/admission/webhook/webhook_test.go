package webhook

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver/admission"
	"github.com/mkube/mkube/apiserver/authentication"
)

var (
	configMaps  = corev1.SchemeGroupVersion.WithResource("configmaps")
	configMapGK = corev1.SchemeGroupVersion.WithKind("ConfigMap")
)

// fakeCluster is the API server's objects, in memory.
type fakeCluster struct {
	objs        map[string]runtime.Object // "<resource>/<namespace>/<name>"
	equivalents []Equivalent
}

func (f *fakeCluster) Get(_ context.Context, gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error) {
	if o, ok := f.objs[gvr.Resource+"/"+ns+"/"+name]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (f *fakeCluster) List(context.Context, schema.GroupVersionResource, string) ([]runtime.Object, error) {
	return nil, nil
}

func (f *fakeCluster) Equivalents(schema.GroupVersionResource, string) []Equivalent {
	return f.equivalents
}

func namespace(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func cluster() *fakeCluster {
	return &fakeCluster{objs: map[string]runtime.Object{
		"namespaces//hooked": namespace("hooked", map[string]string{"webhooks": "on"}),
		"namespaces//other":  namespace("other", nil),
	}}
}

func rule(ops []admissionregistrationv1.OperationType, groups, versions, resources []string, scope admissionregistrationv1.ScopeType) admissionregistrationv1.RuleWithOperations {
	return admissionregistrationv1.RuleWithOperations{Operations: ops,
		Rule: admissionregistrationv1.Rule{APIGroups: groups, APIVersions: versions, Resources: resources, Scope: &scope}}
}

var create = []admissionregistrationv1.OperationType{admissionregistrationv1.Create}

// validatingConfig is a configuration of one webhook at url.
func validatingConfig(name, url string, caBundle []byte, change func(w *admissionregistrationv1.ValidatingWebhook)) *admissionregistrationv1.ValidatingWebhookConfiguration {
	w := admissionregistrationv1.ValidatingWebhook{Name: name + ".example.com",
		ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To(url), CABundle: caBundle},
		Rules:                   []admissionregistrationv1.RuleWithOperations{rule(create, []string{""}, []string{"v1"}, []string{"configmaps"}, "*")},
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1"}, TimeoutSeconds: ptr.To[int32](10)}
	if change != nil {
		change(&w)
	}
	return &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{w}}
}

func mutatingConfig(name, url string, caBundle []byte, change func(w *admissionregistrationv1.MutatingWebhook)) *admissionregistrationv1.MutatingWebhookConfiguration {
	w := admissionregistrationv1.MutatingWebhook{Name: name + ".example.com",
		ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To(url), CABundle: caBundle},
		Rules:                   []admissionregistrationv1.RuleWithOperations{rule(create, []string{""}, []string{"v1"}, []string{"configmaps"}, "*")},
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1"}, TimeoutSeconds: ptr.To[int32](10)}
	if change != nil {
		change(&w)
	}
	return &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{w}}
}

// server is a webhook server: each path answers with its function and
// the reviews it got are kept.
type server struct {
	*httptest.Server
	mu      sync.Mutex
	reviews map[string][]*admissionv1.AdmissionRequest
	block   chan struct{} // /hang waits on it
}

type judge func(req *admissionv1.AdmissionRequest) admissionv1.AdmissionResponse

func newServer(t *testing.T, paths map[string]judge) *server {
	s := &server{reviews: map[string][]*admissionv1.AdmissionRequest{}, block: make(chan struct{})}
	mux := http.NewServeMux()
	for path, j := range paths {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			var review admissionv1.AdmissionReview
			if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			s.mu.Lock()
			s.reviews[path] = append(s.reviews[path], review.Request)
			s.mu.Unlock()
			resp := j(review.Request)
			resp.UID = review.Request.UID
			json.NewEncoder(w).Encode(admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: &resp})
		})
	}
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-s.block:
		case <-r.Context().Done():
		}
	})
	s.Server = httptest.NewTLSServer(mux)
	t.Cleanup(func() { close(s.block); s.Close() })
	return s
}

func (s *server) ca() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
}

func (s *server) got(path string) []*admissionv1.AdmissionRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reviews[path]
}

func allow(*admissionv1.AdmissionRequest) admissionv1.AdmissionResponse {
	return admissionv1.AdmissionResponse{Allowed: true}
}

// addData patches data.<key>=yes into a ConfigMap.
func addData(key string) judge {
	return func(*admissionv1.AdmissionRequest) admissionv1.AdmissionResponse {
		pt := admissionv1.PatchTypeJSONPatch
		return admissionv1.AdmissionResponse{Allowed: true, PatchType: &pt,
			Patch: []byte(`[{"op":"add","path":"/data/` + key + `","value":"yes"}]`)}
	}
}

// configMapCreate is the admission of creating a ConfigMap in hooked.
func configMapCreate(data map[string]string) *admission.Attributes {
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "hooked", Labels: map[string]string{"app": "web"}}, Data: data}
	return &admission.Attributes{Operation: admission.Create, Resource: configMaps, Namespace: "hooked", Name: "cm",
		Kind: configMapGK, Object: cm, Options: &metav1.CreateOptions{},
		Reread: func(b []byte) (runtime.Object, error) {
			out := &corev1.ConfigMap{}
			if err := json.Unmarshal(b, out); err != nil {
				return nil, err
			}
			return out, nil
		}}
}

func userCtx() context.Context {
	return authentication.WithUser(context.Background(), authenticationv1.UserInfo{Username: "alice", Groups: []string{"devs"}})
}

func TestAValidatingWebhookIsSentTheRequestAndItsRefusalIsKubernetes(t *testing.T) {
	s := newServer(t, map[string]judge{"/deny": func(*admissionv1.AdmissionRequest) admissionv1.AdmissionResponse {
		return admissionv1.AdmissionResponse{Result: &metav1.Status{Reason: "the configmap contains unwanted key and value"},
			Warnings: []string{"think again"}}
	}})
	d := New(quiet)
	d.Validating().Update(validatingConfig("deny", s.URL+"/deny", s.ca(), nil), nil)
	var warnings []string
	ctx := admission.WithWarnings(userCtx(), func(w string) { warnings = append(warnings, w) })
	a := configMapCreate(map[string]string{"k": "v"})
	err := d.Call(ctx, a, cluster(), true)

	var st apierrors.APIStatus
	if !errorsAs(err, &st) || st.Status().Code != 400 ||
		st.Status().Message != `admission webhook "deny.example.com" denied the request: the configmap contains unwanted key and value` {
		t.Fatalf("err = %v", err)
	}
	if len(warnings) != 1 || warnings[0] != "think again" {
		t.Fatalf("warnings %v", warnings)
	}
	reqs := s.got("/deny")
	if len(reqs) != 1 {
		t.Fatalf("%d reviews", len(reqs))
	}
	r := reqs[0]
	var sent corev1.ConfigMap
	json.Unmarshal(r.Object.Raw, &sent)
	if r.UID == "" || r.Operation != admissionv1.Create || r.Name != "cm" || r.Namespace != "hooked" ||
		r.Kind != metav1.GroupVersionKind(configMapGK) || *r.RequestResource != metav1.GroupVersionResource(configMaps) ||
		r.UserInfo.Username != "alice" || r.DryRun == nil || *r.DryRun || sent.Data["k"] != "v" || len(r.OldObject.Raw) != 0 {
		t.Fatalf("review %+v (object %s)", r, r.Object.Raw)
	}
}

func TestMutatingWebhooksPatchTheObjectInNameOrder(t *testing.T) {
	s := newServer(t, map[string]judge{"/one": addData("one"), "/two": func(req *admissionv1.AdmissionRequest) admissionv1.AdmissionResponse {
		var cm corev1.ConfigMap
		json.Unmarshal(req.Object.Raw, &cm)
		if cm.Data["one"] != "yes" { // sees what the first one did
			return admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "one is missing"}}
		}
		return addData("two")(req)
	}})
	d := New(quiet)
	d.Mutating().Replace([]runtime.Object{mutatingConfig("b-second", s.URL+"/two", s.ca(), nil), mutatingConfig("a-first", s.URL+"/one", s.ca(), nil)})
	a := configMapCreate(map[string]string{"x": "y"})
	held := a.Object // the storage's object, changed in place
	if err := d.Call(userCtx(), a, cluster(), false); err != nil {
		t.Fatal(err)
	}
	if data := held.(*corev1.ConfigMap).Data; data["one"] != "yes" || data["two"] != "yes" {
		t.Fatalf("data %v", data)
	}
}

func TestAWebhookThatCannotBeCalledFailsTheRequestUnlessIgnored(t *testing.T) {
	s := newServer(t, nil)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	down := "https://" + l.Addr().String() + "/x"
	l.Close()
	tests := []struct {
		name   string
		url    string
		ca     []byte
		policy admissionregistrationv1.FailurePolicyType
		want   string // "" admits
	}{
		{"a refused connection fails a Fail webhook", down, nil, admissionregistrationv1.Fail,
			`Internal error occurred: failed calling webhook "w.example.com": failed to call webhook: Post "` + down + `?timeout=10s": dial tcp`},
		{"a refused connection is ignored by an Ignore webhook", down, nil, admissionregistrationv1.Ignore, ""},
		{"a certificate the CA bundle does not sign fails", s.URL + "/x", nil, admissionregistrationv1.Fail,
			"tls: failed to verify certificate: x509: certificate signed by unknown authority"},
		{"an answer after the timeout fails", s.URL + "/hang", s.ca(), admissionregistrationv1.Fail,
			`/hang?timeout=1s": context deadline exceeded`},
		{"a 404 is no answer", s.URL + "/nothing-here", s.ca(), admissionregistrationv1.Fail, "the server responded with the status code 404"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := New(quiet)
			d.Validating().Update(validatingConfig("w", tc.url, tc.ca, func(w *admissionregistrationv1.ValidatingWebhook) {
				w.FailurePolicy = &tc.policy
				w.TimeoutSeconds = ptr.To[int32](1)
				if tc.want != "" && strings.Contains(tc.want, "10s") {
					w.TimeoutSeconds = ptr.To[int32](10)
				}
			}), nil)
			err := d.Call(userCtx(), configMapCreate(nil), cluster(), true)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("want admitted, got %v", err)
				}
				return
			}
			if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant an Internal error containing %q", err, tc.want)
			}
		})
	}
}

func TestSelectorsAndConditionsChooseTheWebhooksAsked(t *testing.T) {
	tests := []struct {
		name   string
		change func(w *admissionregistrationv1.ValidatingWebhook)
		attrs  func(a *admission.Attributes)
		asked  bool
		err    string
	}{
		{"a namespaceSelector matches the namespace's labels", func(w *admissionregistrationv1.ValidatingWebhook) {
			w.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"webhooks": "on"}}
		}, nil, true, ""},
		{"a namespace without the label is not asked about", func(w *admissionregistrationv1.ValidatingWebhook) {
			w.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"webhooks": "on"}}
		}, func(a *admission.Attributes) { a.Namespace = "other" }, false, ""},
		{"a namespace that does not exist is a 404", func(w *admissionregistrationv1.ValidatingWebhook) {
			w.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"webhooks": "on"}}
		}, func(a *admission.Attributes) { a.Namespace = "gone" }, false, `namespaces "gone" not found`},
		{"an objectSelector matches the object's labels", func(w *admissionregistrationv1.ValidatingWebhook) {
			w.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
		}, nil, false, ""},
		{"a delete is matched by the old object's labels", func(w *admissionregistrationv1.ValidatingWebhook) {
			w.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
			w.Rules[0].Operations = []admissionregistrationv1.OperationType{"DELETE"}
		}, func(a *admission.Attributes) { a.Operation, a.OldObject, a.Object = admission.Delete, a.Object, nil }, true, ""},
		{"a false match condition skips the webhook", func(w *admissionregistrationv1.ValidatingWebhook) {
			w.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "skip-me", Expression: "object.metadata.name != 'cm'"}}
		}, nil, false, ""},
		{"a true one calls it", func(w *admissionregistrationv1.ValidatingWebhook) {
			w.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "user", Expression: "request.userInfo.username == 'alice'"}}
		}, nil, true, ""},
		{"matchPolicy Exact does not match another version", func(w *admissionregistrationv1.ValidatingWebhook) {
			w.Rules[0].APIVersions = []string{"v2"}
			w.MatchPolicy = ptr.To(admissionregistrationv1.Exact)
		}, nil, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, map[string]judge{"/allow": allow})
			d := New(quiet)
			d.Validating().Update(validatingConfig("w", s.URL+"/allow", s.ca(), tc.change), nil)
			a := configMapCreate(nil)
			if tc.attrs != nil {
				tc.attrs(a)
			}
			err := d.Call(userCtx(), a, cluster(), true)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if asked := len(s.got("/allow")) > 0; asked != tc.asked {
				t.Fatalf("asked = %v, want %v", asked, tc.asked)
			}
		})
	}
}

func TestAnEquivalentMatchSendsTheVersionTheRuleNamed(t *testing.T) {
	s := newServer(t, map[string]judge{"/v1": addData("seen")})
	d := New(quiet)
	d.Mutating().Update(mutatingConfig("w", s.URL+"/v1", s.ca(), func(w *admissionregistrationv1.MutatingWebhook) {
		w.Rules[0].APIGroups, w.Rules[0].APIVersions, w.Rules[0].Resources = []string{"example.com"}, []string{"v1"}, []string{"widgets"}
	}), nil)
	v1 := schema.GroupVersion{Group: "example.com", Version: "v1"}
	v2 := schema.GroupVersion{Group: "example.com", Version: "v2"}
	c := cluster()
	c.equivalents = []Equivalent{{Resource: v1.WithResource("widgets"), Kind: v1.WithKind("Widget")}, {Resource: v2.WithResource("widgets"), Kind: v2.WithKind("Widget")}}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v2", "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "namespace": "hooked"}, "data": map[string]any{}}}
	a := &admission.Attributes{Operation: admission.Create, Resource: v2.WithResource("widgets"), Namespace: "hooked", Name: "w1",
		Kind: v2.WithKind("Widget"), Object: u, Reread: func(b []byte) (runtime.Object, error) {
			out := &unstructured.Unstructured{}
			return out, out.UnmarshalJSON(b)
		}}
	if err := d.Call(userCtx(), a, c, false); err != nil {
		t.Fatal(err)
	}
	r := s.got("/v1")[0]
	if r.Kind.Version != "v1" || r.Resource.Version != "v1" || r.RequestKind.Version != "v2" || !strings.Contains(string(r.Object.Raw), `"apiVersion":"example.com/v1"`) {
		t.Fatalf("review kind %v resource %v requestKind %v object %s", r.Kind, r.Resource, r.RequestKind, r.Object.Raw)
	}
	if u.GetAPIVersion() != "example.com/v2" || u.Object["data"].(map[string]any)["seen"] != "yes" {
		t.Fatalf("the object after the patch: %v", u.Object)
	}
}

func TestIfNeededWebhooksAreCalledAgainAfterALaterChange(t *testing.T) {
	s := newServer(t, map[string]judge{"/first": allow, "/second": addData("second")})
	d := New(quiet)
	d.Mutating().Replace([]runtime.Object{
		mutatingConfig("a", s.URL+"/first", s.ca(), func(w *admissionregistrationv1.MutatingWebhook) {
			w.ReinvocationPolicy = ptr.To(admissionregistrationv1.IfNeededReinvocationPolicy)
		}),
		mutatingConfig("b", s.URL+"/second", s.ca(), nil),
	})
	if err := d.Call(userCtx(), configMapCreate(map[string]string{"x": "y"}), cluster(), false); err != nil {
		t.Fatal(err)
	}
	first := s.got("/first")
	if len(first) != 2 || len(s.got("/second")) != 1 || !strings.Contains(string(first[1].Object.Raw), `"second":"yes"`) {
		t.Fatalf("first was called %d times (last with %s), second %d", len(first), first[len(first)-1].Object.Raw, len(s.got("/second")))
	}
}

func TestWhatIsNeverSentToWebhooks(t *testing.T) {
	s := newServer(t, map[string]judge{"/deny": func(*admissionv1.AdmissionRequest) admissionv1.AdmissionResponse {
		return admissionv1.AdmissionResponse{}
	}})
	d := New(quiet)
	d.Validating().Update(validatingConfig("w", s.URL+"/deny", s.ca(), func(w *admissionregistrationv1.ValidatingWebhook) {
		w.Rules[0] = rule([]admissionregistrationv1.OperationType{"*"}, []string{"*"}, []string{"*"}, []string{"*"}, "*")
		w.SideEffects = ptr.To(admissionregistrationv1.SideEffectClassSome)
	}), nil)
	cfg := &admission.Attributes{Operation: admission.Delete, Resource: admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations"),
		Name: "w", Kind: admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingWebhookConfiguration"),
		OldObject: validatingConfig("w", s.URL, nil, nil)}
	if err := d.Call(userCtx(), cfg, cluster(), true); err != nil {
		t.Fatalf("deleting a webhook configuration: %v", err)
	}
	dry := configMapCreate(nil)
	dry.DryRun = true
	err := d.Call(userCtx(), dry, cluster(), true)
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), `admission webhook "w.example.com" does not support dry run`) {
		t.Fatalf("a dry run with a webhook with side effects: %v", err)
	}
	if n := len(s.got("/deny")); n != 0 {
		t.Fatalf("the webhook was called %d times", n)
	}
}

// quiet drops the dispatcher's logs.
var quiet = slog.New(slog.DiscardHandler)

func errorsAs(err error, st *apierrors.APIStatus) bool {
	s, ok := err.(apierrors.APIStatus)
	*st = s
	return ok
}
