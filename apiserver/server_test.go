package apiserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/internal/testserver"
)

// testServer is a real API server with every kind, on a private
// embedded etcd.
type testServer struct {
	*testserver.Server
	t *testing.T
}

func newTestServer(t *testing.T) *testServer { return &testServer{testserver.StartServer(t), t} }

const podJSON = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","labels":{"app":"%s"}},"spec":{"containers":[{"name":"c","image":"nginx:1.25"}]}}`

func (s *testServer) createPod(name, app string) *corev1.Pod {
	s.t.Helper()
	pod := &corev1.Pod{}
	if code := s.Do("POST", "/api/v1/namespaces/default/pods", "application/json", fmt.Sprintf(podJSON, name, app), pod); code != 201 {
		s.t.Fatalf("create pod %s: %d", name, code)
	}
	return pod
}

func (s *testServer) podCount() int {
	s.t.Helper()
	var list corev1.PodList
	s.Do("GET", "/api/v1/pods", "", "", &list)
	return len(list.Items)
}

func TestBadInputGetsAStatusAndWritesNothing(t *testing.T) {
	s := newTestServer(t)
	s.createPod("web", "web")
	stale := &corev1.Pod{}
	s.Do("GET", "/api/v1/namespaces/default/pods/web", "", "", stale)
	s.Do("PATCH", "/api/v1/namespaces/default/pods/web", "application/merge-patch+json", `{"metadata":{"labels":{"v":"2"}}}`, nil)
	staleBody, _ := json.Marshal(stale)

	tests := []struct {
		name, method, path, contentType, body string
		code                                  int
		reason                                metav1.StatusReason
	}{
		{"malformed JSON is a bad request", "POST", "/api/v1/namespaces/default/pods", "application/json", `{"kind":`, 400, metav1.StatusReasonBadRequest},
		{"a Deployment posted to the pods path is a bad request", "POST", "/api/v1/namespaces/default/pods", "application/json", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}`, 400, metav1.StatusReasonBadRequest},
		{"a pod without containers is invalid", "POST", "/api/v1/namespaces/default/pods", "application/json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{}}`, 422, metav1.StatusReasonInvalid},
		{"an upper-case name is invalid", "POST", "/api/v1/namespaces/default/pods", "application/json", fmt.Sprintf(podJSON, "Web", "x"), 422, metav1.StatusReasonInvalid},
		{"a duplicate name already exists", "POST", "/api/v1/namespaces/default/pods", "application/json", fmt.Sprintf(podJSON, "web", "x"), 409, metav1.StatusReasonAlreadyExists},
		{"a missing namespace is not found", "POST", "/api/v1/namespaces/nope/pods", "application/json", fmt.Sprintf(podJSON, "x", "x"), 404, metav1.StatusReasonNotFound},
		{"an update with a stale resourceVersion conflicts", "PUT", "/api/v1/namespaces/default/pods/web", "application/json", string(staleBody), 409, metav1.StatusReasonConflict},
		{"an unknown pod is not found", "GET", "/api/v1/namespaces/default/pods/nope", "", "", 404, metav1.StatusReasonNotFound},
		{"an unknown resource is not found", "GET", "/api/v1/namespaces/default/widgets", "", "", 404, metav1.StatusReasonNotFound},
		{"a body over 3 MiB is too large", "POST", "/api/v1/namespaces/default/pods", "application/json", `{"a":"` + strings.Repeat("x", 3<<20) + `"}`, 413, metav1.StatusReasonRequestEntityTooLarge},
		{"an unsupported field selector is a bad request", "GET", "/api/v1/pods?fieldSelector=spec.image=x", "", "", 400, metav1.StatusReasonBadRequest},
		{"a malformed label selector is a bad request", "GET", "/api/v1/pods?labelSelector=a%20in%20(", "", "", 400, metav1.StatusReasonBadRequest},
		{"an unknown patch type is unsupported", "PATCH", "/api/v1/namespaces/default/pods/web", "text/plain", `x`, 415, metav1.StatusReasonUnsupportedMediaType},
		{"changing a pod's spec.nodeName by patch is forbidden", "PATCH", "/api/v1/namespaces/default/pods/web", "application/merge-patch+json", `{"spec":{"nodeName":"n1"}}`, 422, metav1.StatusReasonInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := s.podCount()
			var st metav1.Status
			code := s.Do(tc.method, tc.path, tc.contentType, tc.body, &st)
			if code != tc.code || st.Kind != "Status" || st.Reason != tc.reason || int(st.Code) != tc.code {
				t.Fatalf("got %d %+v, want %d %s", code, st, tc.code, tc.reason)
			}
			if after := s.podCount(); after != before {
				t.Fatalf("pods %d → %d: an error must write nothing", before, after)
			}
		})
	}
}

func TestInvalidObjectsNameEachBadField(t *testing.T) {
	s := newTestServer(t)
	var st metav1.Status
	s.Do("POST", "/apis/apps/v1/namespaces/default/replicasets", "application/json",
		`{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"rs"},"spec":{"replicas":-1,"selector":{"matchLabels":{"app":"a"}},"template":{"metadata":{"labels":{"app":"b"}},"spec":{"containers":[{"name":"c"}]}}}}`, &st)
	var fields []string
	for _, c := range st.Details.Causes {
		fields = append(fields, c.Field)
	}
	want := "spec.replicas spec.template.metadata.labels spec.template.spec.containers[0].image"
	if strings.Join(fields, " ") != want {
		t.Fatalf("causes %v, want %s", fields, want)
	}
}

func TestServerOwnsMetadataAndGenerationCountsSpecChanges(t *testing.T) {
	s := newTestServer(t)
	var d map[string]any
	s.Do("POST", "/apis/apps/v1/namespaces/default/deployments", "application/json",
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"generateName":"web-","uid":"forged"},"spec":{"selector":{"matchLabels":{"app":"w"}},"template":{"metadata":{"labels":{"app":"w"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`, &d)
	meta := d["metadata"].(map[string]any)
	name := meta["name"].(string)
	if !strings.HasPrefix(name, "web-") || len(name) != 9 || meta["uid"] == "forged" || meta["generation"] != 1.0 {
		t.Fatalf("metadata %v", meta)
	}
	spec := d["spec"].(map[string]any)
	if spec["replicas"] != 1.0 || spec["strategy"].(map[string]any)["rollingUpdate"].(map[string]any)["maxSurge"] != "25%" {
		t.Fatalf("defaults missing: %v", spec)
	}
	path := "/apis/apps/v1/namespaces/default/deployments/" + name
	s.Do("PATCH", path, "application/merge-patch+json", `{"metadata":{"labels":{"x":"y"}}}`, &d)
	if g := d["metadata"].(map[string]any)["generation"]; g != 1.0 {
		t.Fatalf("a label change bumped generation to %v", g)
	}
	s.Do("PATCH", path, "application/merge-patch+json", `{"spec":{"replicas":3}}`, &d)
	if g := d["metadata"].(map[string]any)["generation"]; g != 2.0 {
		t.Fatalf("a spec change left generation at %v", g)
	}
}

func TestStatusSubresourceOwnsOnlyTheStatus(t *testing.T) {
	s := newTestServer(t)
	pod := s.createPod("web", "web")
	pod.Status.Phase = corev1.PodRunning
	pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](5)
	body, _ := json.Marshal(pod)
	var out corev1.Pod
	if code := s.Do("PUT", "/api/v1/namespaces/default/pods/web/status", "application/json", string(body), &out); code != 200 {
		t.Fatalf("status update: %d", code)
	}
	if out.Status.Phase != corev1.PodRunning || out.Spec.ActiveDeadlineSeconds != nil {
		t.Fatalf("status update: phase %s, spec changed %v", out.Status.Phase, out.Spec.ActiveDeadlineSeconds)
	}
	out.Status.Phase = corev1.PodFailed
	body, _ = json.Marshal(out)
	s.Do("PUT", "/api/v1/namespaces/default/pods/web", "application/json", string(body), &out)
	if out.Status.Phase != corev1.PodRunning {
		t.Fatalf("a main-resource update changed the status to %s", out.Status.Phase)
	}
}

func TestPatchTypes(t *testing.T) {
	s := newTestServer(t)
	s.createPod("web", "web")
	tests := []struct {
		name, contentType, patch string
		check                    func(*corev1.Pod) bool
	}{
		{"a merge patch sets a label", "application/merge-patch+json", `{"metadata":{"labels":{"tier":"front"}}}`,
			func(p *corev1.Pod) bool { return p.Labels["tier"] == "front" && p.Labels["app"] == "web" }},
		{"a JSON patch removes a label", "application/json-patch+json", `[{"op":"remove","path":"/metadata/labels/tier"}]`,
			func(p *corev1.Pod) bool { _, ok := p.Labels["tier"]; return !ok }},
		{"a strategic merge patch merges containers by name", "application/strategic-merge-patch+json", `{"spec":{"containers":[{"name":"c","image":"nginx:1.26"}]}}`,
			func(p *corev1.Pod) bool {
				return len(p.Spec.Containers) == 1 && p.Spec.Containers[0].Image == "nginx:1.26"
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out corev1.Pod
			if code := s.Do("PATCH", "/api/v1/namespaces/default/pods/web", tc.contentType, tc.patch, &out); code != 200 || !tc.check(&out) {
				t.Fatalf("%d %+v", code, out.ObjectMeta)
			}
		})
	}
}

func TestBindingSetsTheNodeOnce(t *testing.T) {
	s := newTestServer(t)
	s.createPod("web", "web")
	bind := `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"web","annotations":{"why":"fits"}},"target":{"kind":"Node","name":"node01"}}`
	if code := s.Do("POST", "/api/v1/namespaces/default/pods/web/binding", "application/json", bind, nil); code != 201 {
		t.Fatalf("bind: %d", code)
	}
	var st metav1.Status
	if code := s.Do("POST", "/api/v1/namespaces/default/pods/web/binding", "application/json", bind, &st); code != 409 {
		t.Fatalf("second bind: %d %s", code, st.Message)
	}
	var pod corev1.Pod
	s.Do("GET", "/api/v1/namespaces/default/pods/web", "", "", &pod)
	if pod.Spec.NodeName != "node01" || pod.Annotations["why"] != "fits" || pod.Status.Conditions[0].Type != corev1.PodScheduled {
		t.Fatalf("bound pod: node %q annotations %v conditions %v", pod.Spec.NodeName, pod.Annotations, pod.Status.Conditions)
	}
}

func TestGracefulDeletionOfABoundPod(t *testing.T) {
	s := newTestServer(t)
	s.createPod("unbound", "x")
	if code := s.Do("DELETE", "/api/v1/namespaces/default/pods/unbound", "", "", nil); code != 200 || s.podCount() != 0 {
		t.Fatalf("a pod that never reached a node is deleted at once: %d, %d left", code, s.podCount())
	}
	s.createPod("web", "web")
	s.Do("POST", "/api/v1/namespaces/default/pods/web/binding", "application/json", `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"web"},"target":{"name":"node01"}}`, nil)
	var pod corev1.Pod
	s.Do("DELETE", "/api/v1/namespaces/default/pods/web", "", "", &pod)
	if pod.DeletionTimestamp == nil || *pod.DeletionGracePeriodSeconds != 30 || s.podCount() != 1 {
		t.Fatalf("a bound pod waits for its kubelet: %v %v", pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds)
	}
	s.Do("DELETE", "/api/v1/namespaces/default/pods/web?gracePeriodSeconds=5", "", "", &pod)
	if *pod.DeletionGracePeriodSeconds != 5 {
		t.Fatalf("a shorter grace period shortens the deletion: %d", *pod.DeletionGracePeriodSeconds)
	}
	wrongUID := `{"preconditions":{"uid":"not-it"},"gracePeriodSeconds":0}`
	if code := s.Do("DELETE", "/api/v1/namespaces/default/pods/web", "application/json", wrongUID, nil); code != 409 {
		t.Fatalf("a UID precondition that fails: %d", code)
	}
	s.Do("DELETE", "/api/v1/namespaces/default/pods/web", "application/json", `{"gracePeriodSeconds":0}`, nil)
	if s.podCount() != 0 {
		t.Fatal("gracePeriodSeconds=0 removes the pod")
	}
}

func TestOrphanPropagationKeepsTheOwnerUntilItsFinalizerGoes(t *testing.T) {
	s := newTestServer(t)
	s.createPod("web", "web")
	var pod corev1.Pod
	s.Do("DELETE", "/api/v1/namespaces/default/pods/web?propagationPolicy=Orphan", "", "", &pod)
	if pod.DeletionTimestamp == nil || len(pod.Finalizers) != 1 || pod.Finalizers[0] != metav1.FinalizerOrphanDependents {
		t.Fatalf("orphan deletion: %v %v", pod.DeletionTimestamp, pod.Finalizers)
	}
	s.Do("PATCH", "/api/v1/namespaces/default/pods/web", "application/merge-patch+json", `{"metadata":{"finalizers":null}}`, nil)
	if s.podCount() != 0 {
		t.Fatal("removing the last finalizer completes the deletion")
	}
}

func TestScaleSubresource(t *testing.T) {
	s := newTestServer(t)
	s.Do("POST", "/apis/apps/v1/namespaces/default/replicasets", "application/json",
		`{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"rs"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"a"}},"template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`, nil)
	var scale map[string]any
	s.Do("PATCH", "/apis/apps/v1/namespaces/default/replicasets/rs/scale", "application/merge-patch+json", `{"spec":{"replicas":5}}`, &scale)
	if scale["kind"] != "Scale" || scale["spec"].(map[string]any)["replicas"] != 5.0 || scale["status"].(map[string]any)["selector"] != "app=a" {
		t.Fatalf("scale: %v", scale)
	}
	if code := s.Do("PUT", "/apis/apps/v1/namespaces/default/replicasets/rs/scale", "application/json",
		`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"rs","resourceVersion":"1"},"spec":{"replicas":1}}`, nil); code != 409 {
		t.Fatalf("a stale Scale: %d", code)
	}
	// Strategic merge (a Scale is a Go type) and apply are taken too.
	s.Do("PATCH", "/apis/apps/v1/namespaces/default/replicasets/rs/scale", "application/strategic-merge-patch+json", `{"spec":{"replicas":3}}`, &scale)
	s.Do("PATCH", "/apis/apps/v1/namespaces/default/replicasets/rs/scale?fieldManager=t", "application/apply-patch+yaml",
		"apiVersion: autoscaling/v1\nkind: Scale\nmetadata: {name: rs}\nspec: {replicas: 4}\n", &scale)
	if scale["spec"].(map[string]any)["replicas"] != 4.0 {
		t.Fatalf("after strategic merge and apply: %v", scale)
	}
}

func TestListPagination(t *testing.T) {
	s := newTestServer(t)
	for i := range 5 {
		s.createPod(fmt.Sprintf("p%d", i), map[bool]string{true: "even", false: "odd"}[i%2 == 0])
	}
	var names []string
	cont := ""
	for {
		var list corev1.PodList
		s.Do("GET", "/api/v1/namespaces/default/pods?limit=2&labelSelector=app%3Deven&continue="+cont, "", "", &list)
		for _, p := range list.Items {
			names = append(names, p.Name)
		}
		if cont = list.Continue; cont == "" {
			break
		}
	}
	if strings.Join(names, ",") != "p0,p2,p4" {
		t.Fatalf("pages: %v", names)
	}

	// Without selectors each page but the last says how many objects the
	// others hold (remainingItemCount); with one it cannot know.
	var remaining []string
	for cont := ""; ; {
		var list corev1.PodList
		s.Do("GET", "/api/v1/namespaces/default/pods?limit=2&continue="+cont, "", "", &list)
		if list.RemainingItemCount == nil {
			remaining = append(remaining, "nil")
		} else {
			remaining = append(remaining, fmt.Sprint(*list.RemainingItemCount))
		}
		if cont = list.Continue; cont == "" {
			break
		}
	}
	if got := strings.Join(remaining, ","); got != "3,1,nil" {
		t.Fatalf("remainingItemCount per page: %s, want 3,1,nil", got)
	}
	var selected corev1.PodList
	s.Do("GET", "/api/v1/namespaces/default/pods?limit=1&labelSelector=app%3Deven", "", "", &selected)
	if selected.Continue == "" || selected.RemainingItemCount != nil {
		t.Fatalf("a selected page: continue %q, remainingItemCount %v", selected.Continue, selected.RemainingItemCount)
	}
}

// Kubernetes' "continue listing from the last key if the original version
// has been compacted away": the 410 carries a token that goes on at the
// latest revision, from where the first page ended.
func TestAListWhoseRevisionIsCompactedGoesOnInconsistently(t *testing.T) {
	s := newTestServer(t)
	for i := range 5 {
		s.createPod(fmt.Sprintf("p%d", i), "web")
	}
	var first corev1.PodList
	s.Do("GET", "/api/v1/namespaces/default/pods?limit=2", "", "", &first)
	s.createPod("p5", "web") // after the first page: an inconsistent list sees it
	rev, _ := s.Store.Revision(context.Background())
	if err := s.Store.Compact(context.Background(), rev); err != nil {
		t.Fatal(err)
	}
	var expired metav1.Status
	if code := s.Do("GET", "/api/v1/namespaces/default/pods?limit=2&continue="+first.Continue, "", "", &expired); code != http.StatusGone ||
		expired.Reason != metav1.StatusReasonExpired || expired.Continue == "" || !strings.Contains(expired.Message, "use the continue token in this response") {
		t.Fatalf("got %d %s %q, continue %q", code, expired.Reason, expired.Message, expired.Continue)
	}
	var second corev1.PodList
	if code := s.Do("GET", "/api/v1/namespaces/default/pods?limit=2&continue="+expired.Continue, "", "", &second); code != http.StatusOK {
		t.Fatalf("the inconsistent continuation: %d", code)
	}
	if len(second.Items) != 2 || second.Items[0].Name != "p2" || second.ResourceVersion == first.ResourceVersion ||
		second.RemainingItemCount == nil || *second.RemainingItemCount != 2 {
		t.Fatalf("second page: %d items from %s at rv %s (first %s), remaining %v", len(second.Items), second.Items[0].Name,
			second.ResourceVersion, first.ResourceVersion, second.RemainingItemCount)
	}
}

// watchLines opens a watch and returns a channel of decoded events.
func (s *testServer) watch(ctx context.Context, query string) <-chan map[string]any {
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/api/v1/namespaces/default/pods?watch=true&"+query, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	out := make(chan map[string]any, 100)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			var ev map[string]any
			json.Unmarshal(sc.Bytes(), &ev)
			out <- ev
		}
	}()
	return out
}

func nextEvent(t *testing.T, ch <-chan map[string]any) (typ, name, rv string) {
	t.Helper()
	select {
	case ev := <-ch:
		obj := ev["object"].(map[string]any)
		meta := obj["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		return ev["type"].(string), name, meta["resourceVersion"].(string)
	case <-time.After(5 * time.Second):
		t.Fatal("no watch event")
		return
	}
}

func TestWatchSemantics(t *testing.T) {
	s := newTestServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.createPod("a", "web")
	var list corev1.PodList
	s.Do("GET", "/api/v1/namespaces/default/pods", "", "", &list)

	fromList := s.watch(ctx, "resourceVersion="+list.ResourceVersion)
	replay := s.watch(ctx, "resourceVersion=0")
	selected := s.watch(ctx, "labelSelector=app%3Dweb")
	if typ, name, _ := nextEvent(t, replay); typ != "ADDED" || name != "a" {
		t.Fatalf("resourceVersion=0 first replays the current state: %s %s", typ, name)
	}
	if typ, name, _ := nextEvent(t, selected); typ != "ADDED" || name != "a" {
		t.Fatalf("an unset resourceVersion replays too: %s %s", typ, name)
	}
	s.createPod("b", "db")
	s.Do("PATCH", "/api/v1/namespaces/default/pods/a", "application/merge-patch+json", `{"metadata":{"labels":{"app":"db"}}}`, nil)
	s.Do("PATCH", "/api/v1/namespaces/default/pods/b", "application/merge-patch+json", `{"metadata":{"labels":{"app":"web"}}}`, nil)
	s.Do("DELETE", "/api/v1/namespaces/default/pods/a", "", "", nil)

	want := []string{"ADDED b", "MODIFIED a", "MODIFIED b", "DELETED a"}
	last := 0
	for _, w := range want {
		typ, name, rv := nextEvent(t, fromList)
		var n int
		fmt.Sscan(rv, &n)
		if typ+" "+name != w || n <= last {
			t.Fatalf("got %s %s at rv %s after %d, want %s with a higher rv", typ, name, rv, last, w)
		}
		last = n
	}
	// With a selector, a pod that stops matching is DELETED and one that
	// starts matching is ADDED.
	for _, w := range []string{"DELETED a", "ADDED b"} {
		if typ, name, _ := nextEvent(t, selected); typ+" "+name != w {
			t.Fatalf("selector watch: got %s %s, want %s", typ, name, w)
		}
	}
}

func TestWatchFromACompactedRevisionIsGone(t *testing.T) {
	s := newTestServer(t)
	s.createPod("a", "web")
	for i := range 3 {
		s.Do("PATCH", "/api/v1/namespaces/default/pods/a", "application/merge-patch+json", fmt.Sprintf(`{"metadata":{"labels":{"n":"%d"}}}`, i), nil)
	}
	rev, _ := s.Store.Revision(context.Background())
	if err := s.Store.Compact(context.Background(), rev); err != nil {
		t.Fatal(err)
	}
	ch := s.watch(context.Background(), "resourceVersion=2")
	ev := <-ch
	obj := ev["object"].(map[string]any)
	if ev["type"] != "ERROR" || obj["code"] != 410.0 || obj["reason"] != "Expired" {
		t.Fatalf("got %v", ev)
	}
	if _, open := <-ch; open {
		t.Fatal("the stream ends after the error")
	}
}

func TestWatchListEndsInitialEventsWithABookmark(t *testing.T) {
	s := newTestServer(t)
	s.createPod("a", "web")
	ch := s.watch(context.Background(), "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
	if typ, name, _ := nextEvent(t, ch); typ != "ADDED" || name != "a" {
		t.Fatalf("%s %s", typ, name)
	}
	ev := <-ch
	ann := ev["object"].(map[string]any)["metadata"].(map[string]any)["annotations"].(map[string]any)
	if ev["type"] != "BOOKMARK" || ann[metav1.InitialEventsAnnotationKey] != "true" {
		t.Fatalf("got %v", ev)
	}
}

// Bookmarks come on the server's clock: an idle watch that asked for them
// gets one each bookmark interval (10 s), with the revision it is up to.
func TestAnIdleWatchGetsABookmarkEachInterval(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	s := &testServer{testserver.StartServer(t, func(c *apiserver.Config) { c.Clock = clk }), t}
	s.createPod("a", "web")
	var list corev1.PodList
	s.Do("GET", "/api/v1/namespaces/default/pods", "", "", &list)
	before := clk.Waiters() // the server's progress ticker
	ch := s.watch(context.Background(), "resourceVersion="+list.ResourceVersion+"&allowWatchBookmarks=true")
	testserver.Eventually(t, "the watch waits on the clock", func() (bool, string) {
		return clk.Waiters() > before, fmt.Sprint(clk.Waiters(), " waiters")
	})
	clk.Step(10 * time.Second)
	typ, _, rv := nextEvent(t, ch)
	if typ != "BOOKMARK" || rv != list.ResourceVersion {
		t.Fatalf("got %s at %s, want a BOOKMARK at %s", typ, rv, list.ResourceVersion)
	}
}

func TestAClientLeavingAWatchCostsNothing(t *testing.T) {
	s := newTestServer(t)
	s.createPod("a", "web")
	watchOnce := func() {
		ctx, cancel := context.WithCancel(context.Background())
		ch := s.watch(ctx, "resourceVersion=0")
		<-ch
		cancel()
		for range ch {
		}
	}
	// The first watch starts what stays (the client's connection pool);
	// a leak of 20 watches shows over that baseline.
	watchOnce()
	http.DefaultClient.CloseIdleConnections()
	before := runtime.NumGoroutine()
	for range 20 {
		watchOnce()
	}
	testserver.Eventually(t, "the goroutines of 20 ended watches are gone", func() (bool, string) {
		http.DefaultClient.CloseIdleConnections()
		n := runtime.NumGoroutine()
		return n <= before+2, fmt.Sprintf("goroutines %d → %d", before, n)
	})
}

func TestEventsAreOneObjectSeenThroughTwoAPIGroups(t *testing.T) {
	s := newTestServer(t)
	body := `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e1"},"eventTime":"2026-11-30T02:00:00.000000Z",
	"reportingController":"test","reportingInstance":"test-1","action":"Check","reason":"Checked","note":"hello","type":"Normal",
	"regarding":{"kind":"Pod","name":"web","namespace":"default"}}`
	if code := s.Do("POST", "/apis/events.k8s.io/v1/namespaces/default/events", "application/json", body, nil); code != 201 {
		t.Fatalf("create through events.k8s.io/v1: %d", code)
	}
	var core corev1.Event
	s.Do("GET", "/api/v1/namespaces/default/events/e1", "", "", &core)
	if core.Message != "hello" || core.InvolvedObject.Name != "web" || core.ReportingController != "test" {
		t.Fatalf("the core/v1 view: %+v", core)
	}
	// Its reportingController is the core view's source, for field
	// selectors (the conformance spec "Events API ... listed").
	var bySource corev1.EventList
	s.Do("GET", "/api/v1/namespaces/default/events?fieldSelector=source%3Dtest", "", "", &bySource)
	if len(bySource.Items) != 1 || bySource.Items[0].Name != "e1" {
		t.Errorf("core/v1 events with source=test: %d, want e1", len(bySource.Items))
	}
	var st metav1.Status
	if code := s.Do("POST", "/apis/events.k8s.io/v1/namespaces/default/events", "application/json",
		`{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e2"},"note":"no who or when"}`, &st); code != 422 {
		t.Fatalf("an events.k8s.io/v1 Event without eventTime, reportingController and action: %d %s", code, st.Message)
	}
}

// Discovery answers with or without a trailing slash, as kube-apiserver:
// the e2e framework asks for /apis/.
func TestDiscoveryWithAndWithoutATrailingSlash(t *testing.T) {
	s := newTestServer(t)
	for path, kind := range map[string]string{
		"/api": "APIVersions", "/api/": "APIVersions", "/apis": "APIGroupList", "/apis/": "APIGroupList",
		"/api/v1/": "APIResourceList", "/apis/apps": "APIGroup", "/apis/apps/": "APIGroup", "/apis/apps/v1/": "APIResourceList",
	} {
		var got metav1.TypeMeta
		if code := s.Do("GET", path, "", "", &got); code != 200 || got.Kind != kind {
			t.Errorf("GET %s: %d %s, want 200 %s", path, code, got.Kind, kind)
		}
	}
}

// A deletion's start bumps a generation the object has, once: a pod on a
// node deleted gracefully goes from 1 to 2 (the conformance spec "custom-set
// generation on new pods and graceful delete"), and shortening its grace
// period later bumps nothing; so does a Deployment held by a finalizer.
func TestStartingADeletionBumpsTheGeneration(t *testing.T) {
	s := newTestServer(t)
	const pods = "/api/v1/namespaces/default/pods/"
	if code := s.Do("POST", pods, "application/json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","generation":100},
		"spec":{"nodeName":"node01","containers":[{"name":"c","image":"nginx:1.25"}]}}`, nil); code != 201 {
		t.Fatalf("create pod: %d", code)
	}
	generation := func(path string) int64 {
		var m metav1.PartialObjectMetadata
		s.Do("GET", path, "", "", &m)
		return m.Generation
	}
	if g := generation(pods + "web"); g != 1 {
		t.Fatalf("a new pod's generation = %d, want 1 whatever the client set", g)
	}
	s.Do("DELETE", pods+"web?gracePeriodSeconds=60", "", "", nil)
	if g := generation(pods + "web"); g != 2 {
		t.Errorf("after a graceful delete generation = %d, want 2", g)
	}
	s.Do("DELETE", pods+"web?gracePeriodSeconds=30", "", "", nil)
	if g := generation(pods + "web"); g != 2 {
		t.Errorf("after shortening the grace period generation = %d, want still 2", g)
	}

	const deployments = "/apis/apps/v1/namespaces/default/deployments/"
	if code := s.Do("POST", deployments, "application/json", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","finalizers":["example.com/hold"]},
		"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx:1.25"}]}}}}`, nil); code != 201 {
		t.Fatalf("create deployment: %d", code)
	}
	s.Do("DELETE", deployments+"web", "", "", nil)
	if g := generation(deployments + "web"); g != 2 {
		t.Errorf("a Deployment held by a finalizer: generation = %d after delete, want 2", g)
	}
}

// A review has no table: a client that takes only a Table gets 406
// NotAcceptable, one that also takes JSON gets the review.
func TestAReviewAskedForAsOnlyATableIsNotAcceptable(t *testing.T) {
	s := newTestServer(t)
	const sar = `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"nonResourceAttributes":{"path":"/","verb":"get"}}}`
	for accept, want := range map[string]int{
		"application/json;as=Table;v=v1;g=meta.k8s.io":                  http.StatusNotAcceptable,
		"application/json;as=Table;v=v1;g=meta.k8s.io,application/json": http.StatusCreated,
		"": http.StatusCreated,
	} {
		req, _ := http.NewRequest("POST", s.URL+"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", strings.NewReader(sar))
		req.Header.Set("Content-Type", "application/json")
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		var got metav1.TypeMeta
		if code := s.DoRequest(req, &got); code != want {
			t.Errorf("Accept %q: %d %s, want %d", accept, code, got.Kind, want)
		}
	}
}

// A Namespace's status patch may carry annotations, as with Kubernetes'
// namespace status strategy (the conformance spec "should apply changes
// to a namespace status"); the spec stays.
func TestANamespaceStatusPatchKeepsItsAnnotations(t *testing.T) {
	s := newTestServer(t)
	if code := s.Do("POST", "/api/v1/namespaces", "application/json", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}}`, nil); code != 201 {
		t.Fatalf("create: %d", code)
	}
	var ns corev1.Namespace
	if code := s.Do("PATCH", "/api/v1/namespaces/team/status", "application/merge-patch+json",
		`{"metadata":{"annotations":{"e2e-patched-ns-status":"team"}},"spec":{"finalizers":[]},
		"status":{"conditions":[{"type":"StatusPatch","status":"True","reason":"E2E","message":"Patched by an e2e test"}]}}`, &ns); code != 200 {
		t.Fatalf("patch status: %d", code)
	}
	if ns.Annotations["e2e-patched-ns-status"] != "team" || len(ns.Status.Conditions) != 1 || len(ns.Spec.Finalizers) != 1 {
		t.Errorf("after the status patch: annotations %v, conditions %v, finalizers %v; want the annotation, the condition and the spec's finalizer",
			ns.Annotations, ns.Status.Conditions, ns.Spec.Finalizers)
	}
}

// client-go's OpenAPISchema reads /openapi/v2 as gnostic's protobuf
// Document (and kubectl's validation does, for a kind /openapi/v3 does
// not describe): asked so, the server answers so.
func TestOpenAPIV2IsServedAsProtobufToClientGo(t *testing.T) {
	s := newTestServer(t)
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: s.URL})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := dc.OpenAPISchema()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range doc.GetDefinitions().GetAdditionalProperties() {
		found = found || d.GetName() == "io.k8s.api.core.v1.Pod"
	}
	if doc.GetSwagger() != "2.0" || !found {
		t.Errorf("swagger %q, a Pod definition: %v", doc.GetSwagger(), found)
	}
}
