package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/mkube/mkube/internal/testserver"
)

// Unmodified client-go v0.37 against mkube: shared informers (with the
// WatchList streaming that is on by default, and with plain list+watch)
// converge on the server's state after a burst of writes, and typed clients
// speak protobuf.

// requestLog records the requests client-go sends, for assertions on which
// protocol path was taken.
type requestLog struct {
	mu   sync.Mutex
	reqs []recordedRequest
}

type recordedRequest struct {
	method, url, contentType, accept string
	status                           int
	respContentType                  string
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		r := recordedRequest{method: req.Method, url: req.URL.String(), contentType: req.Header.Get("Content-Type"), accept: req.Header.Get("Accept")}
		if resp != nil {
			r.status, r.respContentType = resp.StatusCode, resp.Header.Get("Content-Type")
		}
		l.mu.Lock()
		l.reqs = append(l.reqs, r)
		l.mu.Unlock()
		return resp, err
	})
}

func (l *requestLog) matching(f func(recordedRequest) bool) []recordedRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []recordedRequest
	for _, r := range l.reqs {
		if f(r) {
			out = append(out, r)
		}
	}
	return out
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// protobufClientset is client-go's clientset speaking protobuf, as its
// generated clients for built-in kinds do by default, JSON its second
// choice.
func protobufClientset(t *testing.T, c *cluster, log *requestLog) *kubernetes.Clientset {
	t.Helper()
	cfg := restConfig(c, log)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func restConfig(c *cluster, log *requestLog) *rest.Config {
	cfg := &rest.Config{Host: c.URL, QPS: -1, Timeout: 30 * time.Second}
	if log != nil {
		cfg.WrapTransport = log.wrap
	}
	return cfg
}

func TestClientGo(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01")
	testserver.EventuallyWithin(t, 30*time.Second, "node01 is registered", func() (bool, string) {
		code := c.do("GET", "/api/v1/nodes/node01", "", nil, nil)
		return code == 200, fmt.Sprintf("GET node01: %d", code)
	})

	t.Run("informers-watchlist", func(t *testing.T) {
		if !clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) {
			t.Fatal("WatchListClient should be on by default in client-go v0.37 (is KUBE_FEATURE_WatchListClient set?)")
		}
		log := &requestLog{}
		testInformers(t, c, log, "wl")
		// The streaming path was taken: a watch with sendInitialEvents that
		// the server accepted, and no fallback LIST.
		isPods := func(r recordedRequest) bool { return strings.Contains(r.url, "/api/v1/pods?") }
		streams := log.matching(func(r recordedRequest) bool {
			return isPods(r) && strings.Contains(r.url, "sendInitialEvents=true") && r.status == 200
		})
		lists := log.matching(func(r recordedRequest) bool { return isPods(r) && !strings.Contains(r.url, "watch=true") })
		if len(streams) == 0 || len(lists) != 0 {
			t.Errorf("WatchList: %d accepted sendInitialEvents watches, %d plain LISTs (want >0 and 0); requests:\n%s",
				len(streams), len(lists), describeRequests(log.matching(isPods)))
		}
	})

	t.Run("informers-listwatch", func(t *testing.T) {
		clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
		log := &requestLog{}
		testInformers(t, c, log, "lw")
		isPods := func(r recordedRequest) bool { return strings.Contains(r.url, "/api/v1/pods?") }
		if s := log.matching(func(r recordedRequest) bool { return isPods(r) && strings.Contains(r.url, "sendInitialEvents") }); len(s) != 0 {
			t.Errorf("WatchList off, yet sendInitialEvents was sent:\n%s", describeRequests(s))
		}
		lists := log.matching(func(r recordedRequest) bool {
			return isPods(r) && !strings.Contains(r.url, "watch=true") && r.status == 200
		})
		watches := log.matching(func(r recordedRequest) bool {
			return isPods(r) && strings.Contains(r.url, "watch=true") && r.status == 200
		})
		if len(lists) == 0 || len(watches) == 0 {
			t.Errorf("list+watch: %d LISTs and %d watches succeeded; requests:\n%s", len(lists), len(watches), describeRequests(log.matching(isPods)))
		}
	})

	t.Run("protobuf", func(t *testing.T) {
		log := &requestLog{}
		cs := protobufClientset(t, c, log)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()

		// ConfigMap: create, get, update, strategic and merge patch, delete.
		cms := cs.CoreV1().ConfigMaps("default")
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "pb", Labels: map[string]string{"a": "1"}},
			Data: map[string]string{"k": "v"}, BinaryData: map[string][]byte{"bin": {0, 1, 2, 255}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create configmap: %v", err)
		}
		if cm.UID == "" || cm.ResourceVersion == "" || cm.Data["k"] != "v" || string(cm.BinaryData["bin"]) != "\x00\x01\x02\xff" {
			t.Fatalf("created configmap: %+v", cm)
		}
		cm.Data["k2"] = "v2"
		up, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update configmap: %v", err)
		}
		if up.Data["k2"] != "v2" || up.ResourceVersion == cm.ResourceVersion {
			t.Fatalf("updated configmap: %+v", up)
		}
		// A stale update conflicts, as a typed error.
		cm.Data["k3"] = "v3"
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			t.Fatalf("stale update: %v, want a Conflict", err)
		}
		p, err := cms.Patch(ctx, "pb", types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"b":"2"}},"data":{"k":"patched"}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("strategic patch configmap: %v", err)
		}
		if p.Labels["a"] != "1" || p.Labels["b"] != "2" || p.Data["k"] != "patched" || p.Data["k2"] != "v2" {
			t.Fatalf("patched configmap: %+v", p)
		}
		p, err = cms.Patch(ctx, "pb", types.MergePatchType, []byte(`{"data":{"k2":null}}`), metav1.PatchOptions{})
		if err != nil || len(p.Data) != 1 {
			t.Fatalf("merge patch configmap: %v %+v", err, p)
		}
		got, err := cms.Get(ctx, "pb", metav1.GetOptions{})
		if err != nil || got.ResourceVersion != p.ResourceVersion || got.Data["k"] != "patched" {
			t.Fatalf("get configmap: %v %+v", err, got)
		}
		if err := cms.Delete(ctx, "pb", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete configmap: %v", err)
		}
		if _, err := cms.Get(ctx, "pb", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("get deleted configmap: %v, want NotFound", err)
		}

		// Pod: create, update, patch, watch it run, delete.
		pods := cs.CoreV1().Pods("default")
		pod, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pb-pod", Labels: map[string]string{"app": "pb"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36",
				Env: []corev1.EnvVar{{Name: "X", Value: "1"}}}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create pod: %v", err)
		}
		if pod.Spec.Containers[0].Image != "busybox:1.36" || pod.Spec.RestartPolicy != corev1.RestartPolicyAlways {
			t.Fatalf("created pod (defaults applied?): %+v", pod.Spec)
		}
		// The scheduler and the kubelet write the pod meanwhile (binding,
		// status): update as a client-go user does, retrying on conflict
		// with a fresh copy.
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			fresh, err := pods.Get(ctx, "pb-pod", metav1.GetOptions{})
			if err != nil {
				return err
			}
			fresh.Labels["updated"] = "yes"
			pod, err = pods.Update(ctx, fresh, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatalf("update pod: %v", err)
		}
		if pod.Labels["updated"] != "yes" {
			t.Fatalf("updated pod labels: %v", pod.Labels)
		}
		pod, err = pods.Patch(ctx, "pb-pod", types.StrategicMergePatchType, []byte(`{"metadata":{"annotations":{"note":"pb"}}}`), metav1.PatchOptions{})
		if err != nil || pod.Annotations["note"] != "pb" || pod.Labels["updated"] != "yes" {
			t.Fatalf("patch pod: %v %+v", err, pod)
		}
		testserver.EventuallyWithin(t, 30*time.Second, "pb-pod is Running", func() (bool, string) {
			if pod, err = pods.Get(ctx, "pb-pod", metav1.GetOptions{}); err != nil {
				t.Fatal(err)
			}
			return pod.Status.Phase == corev1.PodRunning, fmt.Sprintf("status %+v", pod.Status)
		})
		if pod.Spec.NodeName != "node01" || pod.Status.PodIP == "" {
			t.Fatalf("running pod: node %q IP %q", pod.Spec.NodeName, pod.Status.PodIP)
		}
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app=pb"})
		if err != nil || len(list.Items) != 1 || list.ResourceVersion == "" {
			t.Fatalf("list pods: %v %+v", err, list)
		}
		// A watch from the list sees the deletion, decoded from protobuf
		// frames into typed pods.
		w, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: "app=pb", ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatalf("watch pods: %v", err)
		}
		defer w.Stop()
		if err := pods.Delete(ctx, "pb-pod", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete pod: %v", err)
		}
		for deleted := false; !deleted; {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatal("the watch ended before pb-pod was DELETED")
				}
				p, isPod := ev.Object.(*corev1.Pod)
				if !isPod || p.Name != "pb-pod" {
					t.Fatalf("watch event %s %#v, want events of pb-pod", ev.Type, ev.Object)
				}
				deleted = ev.Type == watch.Deleted
			case <-ctx.Done():
				t.Fatal("no DELETED event for pb-pod")
			}
		}
		testserver.EventuallyWithin(t, 30*time.Second, "the deleted pb-pod is gone", func() (bool, string) {
			_, err := pods.Get(ctx, "pb-pod", metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprintf("get pb-pod: %v", err)
		})

		// Every write went out as protobuf, and was understood.
		writes := log.matching(func(r recordedRequest) bool { return r.method == "POST" || r.method == "PUT" })
		if len(writes) == 0 {
			t.Fatal("no writes recorded")
		}
		for _, w := range writes {
			if w.contentType != "application/vnd.kubernetes.protobuf" {
				t.Errorf("%s %s sent %q", w.method, w.url, w.contentType)
			}
		}
		// Every successful read (GET, LIST, WATCH) of a built-in kind was
		// answered in protobuf, as kube-apiserver answers client-go.
		reads := log.matching(func(r recordedRequest) bool { return r.method == "GET" && r.status == 200 })
		var watches int
		for _, r := range reads {
			want := "application/vnd.kubernetes.protobuf"
			if strings.Contains(r.url, "watch=true") {
				want += ";stream=watch"
				watches++
			}
			if r.respContentType != want {
				t.Errorf("GET %s answered %q, want %q", r.url, r.respContentType, want)
			}
		}
		if len(reads) < 4 || watches != 1 {
			t.Errorf("%d reads, %d of them watches; want gets, a list and one watch:\n%s", len(reads), watches, describeRequests(reads))
		}
	})

	t.Run("custom resources answer JSON", func(t *testing.T) {
		testCustomResourcesAnswerJSON(t, c)
	})
}

// testInformers starts pod and node informers, waits for their caches to
// sync, bursts ~50 writes of pods named prefix-N through a typed clientset,
// and waits until the informers' caches equal the server's lists.
func testInformers(t *testing.T, c *cluster, log *requestLog, prefix string) {
	cs, err := kubernetes.NewForConfig(restConfig(c, log))
	if err != nil {
		t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactory(cs, 0)
	podInf := factory.Core().V1().Pods()
	nodeInf := factory.Core().V1().Nodes()
	podInf.Informer()
	nodeInf.Informer()
	stop := make(chan struct{})
	defer func() { close(stop); factory.Shutdown() }()
	factory.Start(stop)
	syncCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for typ, ok := range factory.WaitForCacheSync(syncCtx.Done()) {
		if !ok {
			t.Fatalf("the %v informer did not sync within 20s", typ)
		}
	}

	// The burst: 25 creates, 15 updates, 10 deletes, interleaved.
	ctx, cancel2 := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel2()
	pods := cs.CoreV1().Pods("default")
	const n = 25
	for i := 0; i < n; i++ {
		_, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i), Labels: map[string]string{"burst": prefix}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create pod %d: %v", i, err)
		}
		if i%5 == 4 {
			if err := pods.Delete(ctx, fmt.Sprintf("%s-%d", prefix, i-2), metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete pod: %v", err)
			}
		}
	}
	for i := 0; i < 15; i++ {
		name := fmt.Sprintf("%s-%d", prefix, (i*3+1)%n)
		if (i*3+1)%n%5 == 2 {
			name = fmt.Sprintf("%s-%d", prefix, (i*3+1)%n+1)
		}
		patch := fmt.Sprintf(`{"metadata":{"labels":{"step":"%d"}}}`, i)
		if _, err := pods.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatalf("patch pod %s: %v", name, err)
		}
	}
	for i := 0; i < 5; i++ {
		name := fmt.Sprintf("%s-%d", prefix, i*5)
		if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("delete pod %s: %v", name, err)
		}
	}

	// Eventually the caches equal the server.
	var serverPods *corev1.PodList
	testserver.EventuallyWithin(t, 45*time.Second, "the informer caches equal the server", func() (bool, string) {
		var err error
		if serverPods, err = pods.List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		cachedPods, _ := podInf.Lister().List(labels.Everything())
		serverNodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cachedNodes, _ := nodeInf.Lister().List(labels.Everything())
		var sp, cp, sn, cn []string
		for _, p := range serverPods.Items {
			sp = append(sp, p.Name+"@"+p.ResourceVersion)
		}
		for _, p := range cachedPods {
			cp = append(cp, p.Name+"@"+p.ResourceVersion)
		}
		for _, n := range serverNodes.Items {
			sn = append(sn, n.Name+"@"+n.ResourceVersion)
		}
		for _, n := range cachedNodes {
			cn = append(cn, n.Name+"@"+n.ResourceVersion)
		}
		sort.Strings(sp)
		sort.Strings(cp)
		sort.Strings(sn)
		sort.Strings(cn)
		diff := fmt.Sprintf("pods:\n  server %v\n  cache  %v\nnodes:\n  server %v\n  cache  %v", sp, cp, sn, cn)
		return strings.Join(sp, " ") == strings.Join(cp, " ") && strings.Join(sn, " ") == strings.Join(cn, " "), diff
	})
	burst := 0
	for _, p := range serverPods.Items {
		if p.Labels["burst"] == prefix {
			burst++
		}
	}
	if burst == 0 {
		t.Fatal("no pod of the burst is left to compare")
	}
}

func describeRequests(rs []recordedRequest) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "  %s %s -> %d\n", r.method, r.url, r.status)
	}
	return b.String()
}

// testCustomResourcesAnswerJSON: a custom resource has no protobuf
// encoding, so client-go's typed-client Accept
// ("application/vnd.kubernetes.protobuf,application/json") gets JSON for
// GET, LIST and WATCH, and protobuf alone is 406 NotAcceptable in
// kube-apiserver's words.
func testCustomResourcesAnswerJSON(t *testing.T, c *cluster) {
	crd, err := yaml.YAMLToJSON([]byte(widgetsCRD))
	if err != nil {
		t.Fatal(err)
	}
	if code := c.do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/json", string(crd), nil); code != 201 {
		t.Fatalf("create the widgets CRD: %d", code)
	}
	const widgets = "/apis/example.com/v1/namespaces/default/widgets"
	testserver.EventuallyWithin(t, 30*time.Second, "widgets are served", func() (bool, string) {
		code := c.do("POST", widgets, "application/json", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"colour":"red"}}`, nil)
		return code == 201, fmt.Sprintf("create widget w1: %d", code)
	})

	log := &requestLog{}
	cs := protobufClientset(t, c, log)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rc := cs.CoreV1().RESTClient() // sends the clientset's Accept to any path
	for _, path := range []string{widgets + "/w1", widgets} {
		body, err := rc.Get().AbsPath(path).Do(ctx).Raw()
		if err != nil || !strings.Contains(string(body), `"kind":"Widget`) {
			t.Errorf("GET %s: %v %s", path, err, body)
		}
	}
	stream, err := rc.Get().AbsPath(widgets).Param("watch", "true").Param("resourceVersion", "0").Stream(ctx)
	if err != nil {
		t.Fatalf("watch widgets: %v", err)
	}
	line, err := bufio.NewReader(stream).ReadString('\n')
	stream.Close()
	if err != nil || !strings.HasPrefix(line, `{"type":"ADDED","object":{"apiVersion":"example.com/v1","kind":"Widget"`) {
		t.Errorf("the watch's first event: %v %q", err, line)
	}
	for _, r := range log.matching(func(recordedRequest) bool { return true }) {
		if r.status != 200 || r.respContentType != "application/json" {
			t.Errorf("GET %s: %d %q, want 200 application/json", r.url, r.status, r.respContentType)
		}
	}

	for _, query := range []string{"", "?watch=true"} {
		req, _ := http.NewRequest("GET", c.URL+widgets+query, nil)
		req.Header.Set("Accept", "application/vnd.kubernetes.protobuf")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var st metav1.Status
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		want := "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
		if query != "" {
			want = "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
		}
		if err != nil || resp.StatusCode != 406 || st.Reason != metav1.StatusReasonNotAcceptable || st.Message != want {
			t.Errorf("GET widgets%s accepting only protobuf: %d %+v %v, want 406 %q", query, resp.StatusCode, st, err, want)
		}
	}
}
