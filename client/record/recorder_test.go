package record_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
)

func TestAnEventIsDatedAndNamedByTheRecordersClockAndSignedByItsComponent(t *testing.T) {
	postedc := make(chan *corev1.Event, 1) // server → test: each Event posted
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ev := &corev1.Event{}
		if r.Method != http.MethodPost || r.URL.Path != "/api/v1/namespaces/default/events" || json.NewDecoder(r.Body).Decode(ev) != nil {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		postedc <- ev
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(ev)
	}))
	defer srv.Close()

	at := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	rec := record.New(client.New(srv.URL, "record-test"), "controller-manager", "", slog.New(slog.DiscardHandler)).
		WithComponent("replicaset-controller").WithClock(clocktesting.NewFakePassiveClock(at))
	ctx, cancel := context.WithCancel(context.Background())
	donec := make(chan struct{}) // closed when Run returns
	go func() { defer close(donec); rec.Run(ctx) }()
	defer func() { cancel(); <-donec }() // before srv.Close

	rs := &appsv1.ReplicaSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "rs-uid"}}
	rec.Event(rs, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: %s", "web-1")

	var ev *corev1.Event
	select {
	case ev = <-postedc:
	case <-time.After(5 * time.Second):
		t.Fatal("no Event was posted")
	}
	if !ev.FirstTimestamp.Time.Equal(at) || !ev.LastTimestamp.Time.Equal(at) {
		t.Errorf("firstTimestamp %v, lastTimestamp %v; want the recorder's clock, %v", ev.FirstTimestamp, ev.LastTimestamp, at)
	}
	if want := fmt.Sprintf("web.%x", at.UnixNano()); ev.Name != want {
		t.Errorf("the event is named %q, want %q: the object's name and the clock's nanoseconds", ev.Name, want)
	}
	if ev.Source.Component != "replicaset-controller" || ev.ReportingController != "replicaset-controller" {
		t.Errorf("the event is signed %q (reporting %q), want replicaset-controller", ev.Source.Component, ev.ReportingController)
	}
	if o := ev.InvolvedObject; o.Kind != "ReplicaSet" || o.Name != "web" || o.UID != "rs-uid" || ev.Message != "Created pod: web-1" {
		t.Errorf("the event says %q about %+v", ev.Message, o)
	}
}

// An event that repeats one already sent patches the first one's count
// and lastTimestamp instead of making a new Event; another message is a
// new Event.
func TestARepeatedEventBumpsTheCountOfTheFirst(t *testing.T) {
	type request struct{ method, path, body string }
	requests := make(chan request, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body json.RawMessage
		json.NewDecoder(r.Body).Decode(&body)
		requests <- request{r.Method, r.URL.Path, string(body)}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC))
	rec := record.New(client.New(srv.URL, "record-test"), "kubelet", "node01", slog.New(slog.DiscardHandler)).WithClock(clk)
	ctx, cancel := context.WithCancel(context.Background())
	donec := make(chan struct{})
	go func() { defer close(donec); rec.Run(ctx) }()
	defer func() { cancel(); <-donec }()

	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "crash", UID: "u"}}
	rec.Event(pod, corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s", "crash")
	clk.Step(10 * time.Second)
	rec.Event(pod, corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s", "crash")
	rec.Event(pod, corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s", "other")
	want := []string{"POST /api/v1/namespaces/default/events", "PATCH /api/v1/namespaces/default/events/crash.1886930fd5304000", "POST /api/v1/namespaces/default/events"}
	for i, w := range want {
		select {
		case r := <-requests:
			if r.method+" "+r.path != w {
				t.Fatalf("request %d: %s %s, want %s", i, r.method, r.path, w)
			}
			if i == 1 && r.body != `{"count":2,"lastTimestamp":"2026-01-01T10:00:10Z"}` {
				t.Errorf("patch %s, want the count 2 and the new lastTimestamp", r.body)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("request %d (%s) never came", i, w)
		}
	}
}
