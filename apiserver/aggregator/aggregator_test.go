package aggregator

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver/authentication"
	"github.com/mkube/mkube/apiserver/pki"
	"github.com/mkube/mkube/apiserver/webhookclient"
)

var wardle = schema.GroupVersion{Group: "wardle.example.com", Version: "v1alpha1"}

// backend is an aggregated API server: it records what reached it.
type backend struct {
	*httptest.Server
	mu       sync.Mutex
	seen     []*http.Request
	peerCN   string
	discover int // the status of the discovery answer
}

func startBackend(t *testing.T) *backend {
	b := &backend{discover: http.StatusOK}
	b.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.seen = append(b.seen, r)
		if len(r.TLS.PeerCertificates) > 0 {
			b.peerCN = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		status := b.discover
		b.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/apis/wardle.example.com/v1alpha1" {
			w.WriteHeader(status)
			io.WriteString(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"wardle.example.com/v1alpha1","resources":[
				{"name":"flunders","singularName":"flunder","namespaced":true,"kind":"Flunder","verbs":["get","list"]},
				{"name":"flunders/status","namespaced":true,"kind":"Flunder","verbs":["get"]}]}`)
			return
		}
		io.WriteString(w, `{"kind":"FlunderList","apiVersion":"wardle.example.com/v1alpha1","items":[]}`)
	}))
	b.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	b.StartTLS()
	t.Cleanup(b.Close)
	return b
}

func (b *backend) last() *http.Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seen[len(b.seen)-1]
}

// newAggregator presents the front proxy's certificate of a fresh PKI,
// and reaches the Service sample-api.wardle.svc:7443 at b.
func newAggregator(t *testing.T, b *backend) *Aggregator {
	dir := t.TempDir()
	if _, err := pki.Ensure(dir, []string{"127.0.0.1"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "front-proxy-client.crt"), filepath.Join(dir, "front-proxy-client.key"))
	if err != nil {
		t.Fatal(err)
	}
	a := New(&cert, slog.New(slog.DiscardHandler))
	// The Service's dial goes through a kubelet; here it reaches b.
	tr, err := webhookclient.NewTransport(nil, &cert, false)
	if err != nil {
		t.Fatal(err)
	}
	tr.TLSClientConfig.InsecureSkipVerify = true
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr != "sample-api.wardle.svc:7443" {
			t.Errorf("dialled %s", addr)
		}
		return (&net.Dialer{}).DialContext(ctx, network, b.Listener.Addr().String())
	}
	a.transports[transportKey{insecure: true}] = tr
	return a
}

func apiService(available bool) *apiregistrationv1.APIService {
	svc := &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1alpha1.wardle.example.com"},
		Spec: apiregistrationv1.APIServiceSpec{Group: wardle.Group, Version: wardle.Version, InsecureSkipTLSVerify: true,
			Service: &apiregistrationv1.ServiceReference{Namespace: "wardle", Name: "sample-api", Port: ptr.To[int32](7443)}}}
	if available {
		svc.Status.Conditions = []apiregistrationv1.APIServiceCondition{{Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue}}
	}
	return svc
}

func serve(a *Aggregator, gv schema.GroupVersion, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	if h := a.Proxy(gv); h != nil {
		h.ServeHTTP(w, r)
	} else {
		w.Code = http.StatusNotFound
	}
	return w
}

func TestARequestIsProxiedAsTheUserOnceTheAPIServiceIsAvailable(t *testing.T) {
	b := startBackend(t)
	a := newAggregator(t, b)
	a.Replace([]runtime.Object{apiService(false)})
	if a.Proxy(schema.GroupVersion{Group: "apps", Version: "v1"}) != nil {
		t.Fatal("a group-version no APIService hands out is proxied")
	}
	jane := authenticationv1.UserInfo{Username: "jane", UID: "42", Groups: []string{"devs", "system:authenticated"},
		Extra: map[string]authenticationv1.ExtraValue{"scopes.example.com/team": {"a", "b"}}}
	request := func() *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders?limit=5", nil)
		r.Header.Set("Authorization", "Bearer jane's token")
		r.Header.Set("Impersonate-User", "jane")
		r.Header.Set("X-Remote-User", "system:admin") // a client's own claim
		return r.WithContext(authentication.WithUser(r.Context(), jane))
	}

	w := serve(a, wardle, request())
	var st metav1.Status
	json.Unmarshal(w.Body.Bytes(), &st)
	if w.Code != http.StatusServiceUnavailable || st.Reason != metav1.StatusReasonServiceUnavailable || st.Message != "service unavailable" {
		t.Fatalf("before it is available: %d %s", w.Code, w.Body)
	}

	a.Update(apiService(true), apiService(false))
	w = serve(a, wardle, request())
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "FlunderList") {
		t.Fatalf("proxied: %d %s", w.Code, w.Body)
	}
	got := b.last()
	want := map[string][]string{
		"X-Remote-User": {"jane"}, "X-Remote-Uid": {"42"}, "X-Remote-Group": {"devs", "system:authenticated"},
		"X-Remote-Extra-Scopes.example.com%2fteam": {"a", "b"}, "Authorization": nil, "Impersonate-User": nil,
	}
	for name, values := range want {
		if !slices.Equal(got.Header.Values(name), values) {
			t.Errorf("%s: %q, want %q", name, got.Header.Values(name), values)
		}
	}
	if got.URL.RequestURI() != "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders?limit=5" || got.Host != "sample-api.wardle.svc:7443" {
		t.Errorf("reached %s %s", got.Host, got.URL.RequestURI())
	}
	if b.peerCN != "front-proxy-client" {
		t.Errorf("the proxy presented %q, want front-proxy-client", b.peerCN)
	}

	a.Update(nil, apiService(true))
	if a.Proxy(wardle) != nil {
		t.Error("still proxied after the APIService was deleted")
	}
}

func TestTheDiscoveryCheckIsWhatDiscoveryLists(t *testing.T) {
	b := startBackend(t)
	a := newAggregator(t, b)
	svc := apiService(false)
	a.Replace([]runtime.Object{svc})
	if gvs := a.GroupVersions(); len(gvs) != 1 || gvs[0].GroupVersion != wardle || gvs[0].Resources != nil {
		t.Fatalf("before a check: %+v", gvs)
	}
	if err := a.Check(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	if r := b.last(); r.Header.Get("X-Remote-User") != "system:kube-aggregator" || r.Header.Get("X-Remote-Group") != "system:masters" {
		t.Errorf("checked as %q in %q", r.Header.Get("X-Remote-User"), r.Header.Values("X-Remote-Group"))
	}
	a.Update(apiService(true), svc)
	gvs := a.GroupVersions()
	if len(gvs) != 1 || gvs[0].Stale || len(gvs[0].Resources) != 2 || gvs[0].Resources[0].Name != "flunders" {
		t.Fatalf("after a check: %+v", gvs)
	}

	b.mu.Lock()
	b.discover = http.StatusForbidden
	b.mu.Unlock()
	err := a.Check(context.Background(), svc)
	const want = "failing or missing response from https://sample-api.wardle.svc:7443/apis/wardle.example.com/v1alpha1: " +
		"bad status from https://sample-api.wardle.svc:7443/apis/wardle.example.com/v1alpha1: 403"
	if err == nil || err.Error() != want {
		t.Fatalf("a refused check: %v, want %s", err, want)
	}
	if gvs := a.GroupVersions(); !gvs[0].Stale || len(gvs[0].Resources) != 2 {
		t.Errorf("after a failed check, the last list is kept, stale: %+v", gvs)
	}
}
