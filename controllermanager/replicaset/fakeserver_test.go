package replicaset

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/controller"
)

// fakeAPI is just enough of an API server to call sync directly: it lists
// a fixed ReplicaSet and pods, holds watches open without events (so the
// informers' caches never learn of the controller's own writes, which is
// exactly the window expectations guard), and records writes.
type fakeAPI struct {
	rs   *appsv1.ReplicaSet
	pods []*corev1.Pod
	// createCode and deleteCode answer the n-th POST or DELETE (from 1).
	createCode func(n int) int
	deleteCode func(n int) int

	mu      sync.Mutex
	created []*corev1.Pod
	deleted []string
	creates int
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	writeJSON := func(code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	fail := func(code int, reason metav1.StatusReason) {
		writeJSON(code, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status: metav1.StatusFailure, Code: int32(code), Reason: reason, Message: string(reason)})
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Query().Get("watch") == "true":
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // no events; ends when the informer stops
	case r.Method == http.MethodGet && r.URL.Path == "/apis/apps/v1/replicasets":
		l := &appsv1.ReplicaSetList{ListMeta: metav1.ListMeta{ResourceVersion: "10"}, Items: []appsv1.ReplicaSet{*f.rs}}
		writeJSON(http.StatusOK, l)
	case r.Method == http.MethodGet && r.URL.Path == "/api/v1/pods":
		l := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "10"}}
		for _, p := range f.pods {
			l.Items = append(l.Items, *p)
		}
		writeJSON(http.StatusOK, l)
	case r.Method == http.MethodPost && r.URL.Path == "/api/v1/namespaces/default/pods":
		pod := &corev1.Pod{}
		json.NewDecoder(r.Body).Decode(pod)
		f.mu.Lock()
		f.creates++
		n := f.creates
		f.mu.Unlock()
		if code := f.createCode(n); code != http.StatusCreated {
			fail(code, metav1.StatusReasonForbidden)
			return
		}
		pod.Name = fmt.Sprintf("%s%d", pod.GenerateName, n)
		pod.UID = types.UID(fmt.Sprint("pod-uid-", n))
		pod.ResourceVersion = fmt.Sprint(100 + n)
		f.mu.Lock()
		f.created = append(f.created, pod)
		f.mu.Unlock()
		writeJSON(http.StatusCreated, pod)
	case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/default/pods/"):
		f.mu.Lock()
		f.deleted = append(f.deleted, strings.TrimPrefix(r.URL.Path, "/api/v1/namespaces/default/pods/"))
		n := len(f.deleted)
		f.mu.Unlock()
		if code := f.deleteCode(n); code != http.StatusOK {
			fail(code, metav1.StatusReasonNotFound)
			return
		}
		writeJSON(http.StatusOK, &metav1.Status{Status: metav1.StatusSuccess})
	case r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/status"):
		writeJSON(http.StatusOK, f.rs)
	default:
		fail(http.StatusNotFound, metav1.StatusReasonNotFound)
	}
}

func (f *fakeAPI) writes() (creates int, created []*corev1.Pod, deleted []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.creates, append([]*corev1.Pod(nil), f.created...), append([]string(nil), f.deleted...)
}

// newSyncedController serves f, starts the controller's informers (not
// its workers: the test calls sync itself) and waits for them to list.
func newSyncedController(t *testing.T, f *fakeAPI) *Controller {
	t.Helper()
	hs := httptest.NewServer(f)
	t.Cleanup(hs.Close)
	c := client.New(hs.URL, "replicaset-sync-test")
	d := controller.NewDeps(c, slog.New(slog.DiscardHandler), nil)
	ctrl := New(d, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { d.Informers.Run(ctx) })    // the informers only: events stay queued, unsent
	t.Cleanup(func() { cancel(); wg.Wait() }) // runs before hs.Close
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	if !d.Informers.WaitForSync(wctx) {
		t.Fatal("informers did not sync")
	}
	return ctrl
}

func testRS(replicas int32) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "rs-uid", ResourceVersion: "5", Generation: 1},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}},
			},
		},
	}
}

// ownedPod is a pod the ReplicaSet created, created at t0+age.
func ownedPod(rs *appsv1.ReplicaSet, name string, age time.Duration) *corev1.Pod {
	p := newTestPod(name, createdAt(age))
	p.Labels = map[string]string{"app": "web"}
	p.UID = types.UID("uid-" + name)
	p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}
	return p
}

func always(code int) func(int) int { return func(int) int { return code } }

func TestSyncDoesNotActAgainUntilItsCreationsAreObserved(t *testing.T) {
	f := &fakeAPI{rs: testRS(3), createCode: always(http.StatusCreated), deleteCode: always(http.StatusOK)}
	ctrl := newSyncedController(t, f)
	var logs bytes.Buffer // slog's handler serializes the workers' writes
	ctrl.log = slog.New(slog.NewTextHandler(&logs, nil))
	ctx := context.Background()

	if err := ctrl.sync(ctx, "default/web"); err != nil {
		t.Fatalf("first sync: %v", err)
	}
	// Seed 000, step 6, as the log shows it in README.md:
	// the decision and each of the three creations.
	if n := strings.Count(logs.String(), " step=6 "); n != 4 {
		t.Errorf("%d log lines carry step=6, want 4 (too few pods, then created pod ×3):\n%s", n, logs.String())
	}
	// The cache still shows no pods; without expectations this sync would
	// create three more.
	if err := ctrl.sync(ctx, "default/web"); err != nil {
		t.Fatalf("second sync: %v", err)
	}
	creates, created, _ := f.writes()
	if creates != 3 {
		t.Fatalf("%d pod creations, want 3", creates)
	}
	for i, p := range created {
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.UID != "rs-uid" || p.GenerateName != "web-" || p.Labels["app"] != "web" {
			t.Errorf("created pod %d is not the template owned by the ReplicaSet: %+v", i, p.ObjectMeta)
		}
	}
	if ctrl.exp.Satisfied("default/web") {
		t.Fatal("expectations satisfied before any creation was observed")
	}
	// The informer delivers the pods.
	for i, p := range created {
		ctrl.podAdded(p)
		if got, want := ctrl.exp.Satisfied("default/web"), i == len(created)-1; got != want {
			t.Errorf("after observing %d of 3 creations, satisfied = %v, want %v", i+1, got, want)
		}
	}
}

func TestSyncStopsCreatingAtTheFirstFailureAndDoesNotWaitForFailedCreations(t *testing.T) {
	// The first create succeeds, every later one is forbidden (a quota).
	f := &fakeAPI{rs: testRS(5), deleteCode: always(http.StatusOK), createCode: func(n int) int {
		if n == 1 {
			return http.StatusCreated
		}
		return http.StatusForbidden
	}}
	ctrl := newSyncedController(t, f)

	err := ctrl.sync(context.Background(), "default/web")
	if err == nil {
		t.Fatal("sync succeeded although creations failed; it must return the error so the key is retried")
	}
	creates, created, _ := f.writes()
	if creates != 3 {
		t.Errorf("%d create requests, want 3: a batch of 1 that succeeds, a batch of 2 that fails, then stop", creates)
	}
	if ctrl.exp.Satisfied("default/web") {
		t.Fatal("satisfied before the one successful creation was observed")
	}
	ctrl.podAdded(created[0])
	if !ctrl.exp.Satisfied("default/web") {
		t.Error("still waiting after the only successful creation was observed: the failed ones will never arrive")
	}
}

func TestSyncDeletesTheSurplusAndWaitsForThoseDeletions(t *testing.T) {
	rs := testRS(1)
	f := &fakeAPI{rs: rs, createCode: always(http.StatusCreated), deleteCode: always(http.StatusOK),
		pods: []*corev1.Pod{ownedPod(rs, "web-old", 0), ownedPod(rs, "web-new", time.Minute), ownedPod(rs, "web-newest", 2*time.Minute)}}
	ctrl := newSyncedController(t, f)
	ctx := context.Background()

	if err := ctrl.sync(ctx, "default/web"); err != nil {
		t.Fatal(err)
	}
	if err := ctrl.sync(ctx, "default/web"); err != nil { // the cache still shows 3
		t.Fatal(err)
	}
	_, _, deleted := f.writes()
	sort.Strings(deleted) // deleted concurrently
	if want := []string{"web-new", "web-newest"}; !reflect.DeepEqual(deleted, want) {
		t.Fatalf("deleted %v, want the two newest pods once each: %v", deleted, want)
	}
	ctrl.podDeleted(ownedPod(rs, "web-old", 0)) // not one of ours to wait for
	ctrl.podDeleted(ownedPod(rs, "web-new", time.Minute))
	if ctrl.exp.Satisfied("default/web") {
		t.Fatal("satisfied after one of two expected deletions (and an unrelated one)")
	}
	ctrl.podDeleted(ownedPod(rs, "web-newest", 2*time.Minute))
	if !ctrl.exp.Satisfied("default/web") {
		t.Error("not satisfied after both deletions were observed")
	}
}

func TestSyncDoesNotWaitForTheDeletionOfAPodThatWasAlreadyGone(t *testing.T) {
	// The cache still holds web-b, but it is already gone from the server
	// (somebody deleted it): its DELETED event may even have been handled
	// between sync reading the cache and recording its expectations, and
	// so never be counted. A 404 is the only news sync will get.
	rs := testRS(1)
	f := &fakeAPI{rs: rs, createCode: always(http.StatusCreated), deleteCode: always(http.StatusNotFound),
		pods: []*corev1.Pod{ownedPod(rs, "web-a", 0), ownedPod(rs, "web-b", time.Minute)}}
	ctrl := newSyncedController(t, f)

	if err := ctrl.sync(context.Background(), "default/web"); err != nil {
		t.Fatalf("sync: %v (NotFound means the pod is gone, which is what we wanted)", err)
	}
	if _, _, deleted := f.writes(); len(deleted) != 1 || deleted[0] != "web-b" {
		t.Fatalf("deleted %v, want [web-b]", deleted)
	}
	if !ctrl.exp.Satisfied("default/web") {
		t.Error("the ReplicaSet waits for the deletion of a pod the server says is gone; " +
			"if its event was already handled it waits 5 minutes (expectationsTTL) before managing replicas again")
	}
}
