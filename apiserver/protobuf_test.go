package apiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
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
	cs, seen := protobufClient(t, s.URL)
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

// Every kind the server lists is answered in protobuf when client-go's
// typed clients ask, with apiVersion and kind in the envelope (client-go
// decodes by them), its lists and its objects alike; a kind without
// protobuf would be answered in JSON.
func TestEveryBuiltInKindIsServedInProtobuf(t *testing.T) {
	s := newTestServer(t)
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: s.URL})
	if err != nil {
		t.Fatal(err)
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	get := func(path, accept string) (string, []byte) {
		req, _ := http.NewRequest("GET", s.URL+path, nil)
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, data)
		}
		return resp.Header.Get("Content-Type"), data
	}
	envelope := func(what string, data []byte) runtime.TypeMeta {
		var unk runtime.Unknown
		if !bytes.HasPrefix(data, []byte("k8s\x00")) || unk.Unmarshal(data[4:]) != nil {
			t.Fatalf("%s: not a Kubernetes protobuf body: %q", what, data)
		}
		return unk.TypeMeta
	}
	kinds, gets := 0, 0
	for _, l := range lists {
		prefix := "/apis/" + l.GroupVersion
		if l.GroupVersion == "v1" {
			prefix = "/api/v1"
		}
		for _, r := range l.APIResources {
			if !slices.Contains(r.Verbs, "list") {
				continue
			}
			kinds++
			path := prefix + "/" + r.Name
			ct, data := get(path, "application/vnd.kubernetes.protobuf,application/json")
			if ct != "application/vnd.kubernetes.protobuf" {
				t.Errorf("LIST %s answered %q", path, ct)
				continue
			}
			if tm := envelope(path, data); tm.APIVersion != l.GroupVersion || tm.Kind != r.Kind+"List" {
				t.Errorf("LIST %s: envelope %+v, want %s %sList", path, tm, l.GroupVersion, r.Kind)
			}
			var list struct {
				Items []metav1.PartialObjectMetadata `json:"items"`
			}
			if _, data := get(path, "application/json"); json.Unmarshal(data, &list) != nil || len(list.Items) == 0 {
				continue // nothing to GET
			}
			gets++
			item := list.Items[0]
			one := path + "/" + item.Name
			if item.Namespace != "" {
				one = prefix + "/namespaces/" + item.Namespace + "/" + r.Name + "/" + item.Name
			}
			if ct, data := get(one, "application/vnd.kubernetes.protobuf,application/json"); ct != "application/vnd.kubernetes.protobuf" {
				t.Errorf("GET %s answered %q", one, ct)
			} else if tm := envelope(one, data); tm.APIVersion != l.GroupVersion || tm.Kind != r.Kind {
				t.Errorf("GET %s: envelope %+v, want %s %s", one, tm, l.GroupVersion, r.Kind)
			}
		}
	}
	t.Logf("%d kinds listed, %d of them with an object to get", kinds, gets)
	if kinds < 50 {
		t.Errorf("only %d kinds listed", kinds)
	}
}

// An informer of client-go v0.37 (WatchList on by default: a watch with
// sendInitialEvents, ended by a bookmark) syncs over protobuf frames.
func TestAProtobufInformerSyncsThroughAWatchList(t *testing.T) {
	s := newTestServer(t)
	s.createPod("web", "web")
	cs, seen := protobufClient(t, s.URL)
	factory := informers.NewSharedInformerFactory(cs, 0)
	pods := factory.Core().V1().Pods()
	pods.Informer() // registered before Start
	stop := make(chan struct{})
	defer func() { close(stop); factory.Shutdown() }()
	factory.Start(stop)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), pods.Informer().HasSynced) {
		t.Fatal("the pod informer never synced")
	}
	if pod, err := pods.Lister().Pods("default").Get("web"); err != nil || pod.Spec.Containers[0].Image != "nginx:1.25" {
		t.Fatalf("the informer's pod web: %v %+v", err, pod)
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	streamed := false
	for req, ct := range seen.got {
		streamed = streamed || strings.Contains(req, "sendInitialEvents=true") && ct == "application/vnd.kubernetes.protobuf;stream=watch"
	}
	if !streamed {
		t.Errorf("no watch-list answered in protobuf: %v", seen.got)
	}
}

// protobufClient is a clientset asking for protobuf as client-go's
// generated clients do, and the content types it was answered in.
func protobufClient(t *testing.T, url string) (*kubernetes.Clientset, *contentTypes) {
	t.Helper()
	seen := &contentTypes{got: map[string]string{}}
	cfg := &rest.Config{Host: url, WrapTransport: seen.RoundTrip}
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, seen
}
