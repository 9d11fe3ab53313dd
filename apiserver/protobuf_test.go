package apiserver_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// contentTypes records the Content-Type of every answer, by request.
type contentTypes struct {
	mu  sync.Mutex
	got map[string]string // "GET /api/v1/...?..." → Content-Type
}

func (c *contentTypes) RoundTrip(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err == nil {
			c.mu.Lock()
			c.got[req.Method+" "+req.URL.RequestURI()] = resp.Header.Get("Content-Type")
			c.mu.Unlock()
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// client-go's generated clients ask for protobuf first, JSON second
// (Kubernetes' own components are configured so): GET, LIST and WATCH of
// a built-in kind are then answered in protobuf, which client-go decodes
// into the same typed objects; the watch is length-prefixed WatchEvent
// frames, its objects encoded once in the watch cache.
func TestClientGoGetsProtobufForGetListAndWatch(t *testing.T) {
	s := newTestServer(t)
	seen := &contentTypes{got: map[string]string{}}
	cfg := &rest.Config{Host: s.URL, WrapTransport: seen.RoundTrip}
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pods := cs.CoreV1().Pods("default")

	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	s.createPod("web", "web")
	ev := nextTypedEvent(t, w)
	if pod, ok := ev.Object.(*corev1.Pod); ev.Type != watch.Added || !ok || pod.Name != "web" || pod.Spec.Containers[0].Image != "nginx:1.25" {
		t.Fatalf("watch event %s %#v, want ADDED of the pod web", ev.Type, ev.Object)
	}
	if _, err := pods.Patch(ctx, "web", "application/merge-patch+json", []byte(`{"metadata":{"labels":{"v":"2"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := nextTypedEvent(t, w); ev.Type != watch.Modified || ev.Object.(*corev1.Pod).Labels["v"] != "2" {
		t.Fatalf("watch event %s %#v, want MODIFIED with the label", ev.Type, ev.Object)
	}
	got, err := pods.Get(ctx, "web", metav1.GetOptions{})
	if err != nil || got.Labels["v"] != "2" || got.Kind != "" && got.Kind != "Pod" {
		t.Fatalf("get: %v %+v", err, got)
	}
	list, err = pods.List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil || len(list.Items) != 1 || list.ResourceVersion == "" {
		t.Fatalf("list: %v %+v", err, list)
	}

	seen.mu.Lock()
	defer seen.mu.Unlock()
	var reads int
	for req, ct := range seen.got {
		if !strings.HasPrefix(req, "GET ") {
			continue
		}
		reads++
		want := "application/vnd.kubernetes.protobuf"
		if strings.Contains(req, "watch=true") {
			want += ";stream=watch"
		}
		if ct != want {
			t.Errorf("%s answered %q, want %q", req, ct, want)
		}
	}
	if reads != 4 { // two lists, a watch, a get
		t.Errorf("%d reads recorded, want 4: %v", reads, seen.got)
	}
}

func nextTypedEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no watch event")
		return watch.Event{}
	}
}

// A watch that accepts only what cannot be streamed (YAML), or a read
// that accepts nothing the server makes, is 406 NotAcceptable in
// kube-apiserver's words, and nothing is listed or watched.
func TestAnswersNobodyAcceptsAreNotAcceptable(t *testing.T) {
	s := newTestServer(t)
	for _, tc := range []struct{ path, accept, message string }{
		{"/api/v1/namespaces/default/pods?watch=true", "application/yaml",
			"only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"},
		{"/api/v1/namespaces/default/pods", "text/html",
			"only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"},
	} {
		req, _ := http.NewRequest("GET", s.URL+tc.path, nil)
		req.Header.Set("Accept", tc.accept)
		var st metav1.Status
		if code := s.DoRequest(req, &st); code != http.StatusNotAcceptable || st.Reason != metav1.StatusReasonNotAcceptable || st.Message != tc.message {
			t.Errorf("GET %s, Accept %s: %d %+v, want 406 %q", tc.path, tc.accept, code, st, tc.message)
		}
	}
}
