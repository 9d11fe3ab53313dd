package dashboard

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func mt(s float64) metav1.Time { return metav1.NewTime(at(s)) }

// webPod is a Deployment's pod as the API has it once Running and ready.
func webPod() (*corev1.Pod, *appsv1.ReplicaSet, *appsv1.Deployment) {
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "d", CreationTimestamp: mt(0)}}
	yes := true
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1", UID: "r", CreationTimestamp: mt(0),
		OwnerReferences: []metav1.OwnerReference{{Kind: "Deployment", Name: "web", UID: "d", Controller: &yes}}}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1-a", UID: "p", CreationTimestamp: mt(1),
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-1", UID: "r", Controller: &yes}}},
		Spec: corev1.PodSpec{NodeName: "node02", Containers: []corev1.Container{{Name: "nginx"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: ptr(mt(2)),
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: mt(1)},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: mt(3)},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: mt(3)},
			},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "nginx", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: mt(3)}}}},
		},
	}
	return pod, rs, dep
}

func event(kind, name, reason, component, message string, s float64) *corev1.Event {
	return &corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: "default", Name: name},
		Reason: reason, Message: message, Source: corev1.EventSource{Component: component}, FirstTimestamp: mt(s)}
}

func ptr[T any](v T) *T { return &v }

func TestADeploymentsPodSeenLiveHasEveryStepButThoseNoRecordShows(t *testing.T) {
	pod, rs, dep := webPod()
	steps := StepsOf(pod, rs, dep, Records{
		Events: []*corev1.Event{
			event("ReplicaSet", "web-1", "SuccessfulCreate", "replicaset-controller", "Created pod: web-1-a", 1),
			event("Pod", "web-1-a", "Scheduled", "default-scheduler", "Successfully assigned default/web-1-a to node02", 1),
			event("Pod", "web-1-a", "Started", "kubelet", "Started container nginx", 3),
		},
		Top: Sighting{Added: at(0.01)},
		Pod: Sighting{Added: at(1.01), Bound: at(1.02), Ready: at(3.5)},
	})
	if len(steps) != 13 {
		t.Fatalf("%d steps", len(steps))
	}
	var last time.Time
	for i, s := range steps {
		if s.N != i+1 {
			t.Errorf("step %d is numbered %d", i+1, s.N)
		}
		observed := s.Unobserved == ""
		if want := s.N != 1 && s.N != 2 && s.N != 4; observed != want {
			t.Errorf("step %d: observed %v, want %v (%q)", s.N, observed, want, s.Unobserved)
		}
		// API times are kept to the second: a step may read up to the
		// second of the dashboard's delivery before it.
		if observed {
			if s.At().Before(last.Truncate(time.Second)) {
				t.Errorf("step %d at %s is before the step before it (%s)", s.N, s.At(), last)
			}
			last = s.At()
		}
	}
	for n, want := range map[int]string{3: "Deployment default/web metadata.creationTimestamp", 5: "the dashboard's watch: ADDED Deployment default/web",
		6: "event SuccessfulCreate (replicaset-controller)", 7: "pod metadata.creationTimestamp", 9: "event Scheduled (default-scheduler)",
		10: "pod condition PodScheduled lastTransitionTime", 11: "the dashboard's watch: first event with spec.nodeName", 12: "pod status.startTime",
		13: "pod condition ContainersReady lastTransitionTime"} {
		if got := steps[n-1].Records[0].Source; got != want {
			t.Errorf("step %d's first record is %q, want %q", n, got, want)
		}
	}
}

func TestABarePodFoundByTheFirstListSaysWhatTheDashboardCouldNotSee(t *testing.T) {
	pod, _, _ := webPod()
	pod.OwnerReferences = nil
	s := NewSightings()
	s.SeePod("LISTED", pod, at(10))
	s.SeePod("MODIFIED", pod, at(11)) // still bound and ready: not the binding's delivery
	steps := StepsOf(pod, nil, nil, Records{Pod: s.Get(pod.UID)})
	if got := steps[2].Records[0].Source; got != "pod default/web-1-a metadata.creationTimestamp" {
		t.Errorf("step 3 of a bare pod reads %q", got)
	}
	for _, n := range []int{5, 6} {
		if !strings.Contains(steps[n-1].Unobserved, "no controller") {
			t.Errorf("step %d of a bare pod: %q", n, steps[n-1].Unobserved)
		}
	}
	for _, n := range []int{8, 11} {
		if len(steps[n-1].Records) != 0 {
			t.Errorf("step %d shows a delivery the dashboard did not see: %+v", n, steps[n-1].Records)
		}
	}
	for _, r := range steps[12].Records {
		if !r.API {
			t.Errorf("step 13 shows the dashboard's delivery of a readiness it found already so: %+v", r)
		}
	}
}

func TestAStreamThatFallsBehindIsDroppedNotWaitedFor(t *testing.T) {
	h := NewBroadcast[int](discard(), "ints")
	slow, fast := h.Subscribe(), h.Subscribe()
	for i := range subscriberBuffer + 1 {
		h.Publish(i)
		<-fast
	}
	if h.Subscribers() != 1 {
		t.Fatalf("%d subscribers, want the slow one dropped", h.Subscribers())
	}
	n := 0
	for range slow { // closed after what it had buffered
		n++
	}
	if n != subscriberBuffer {
		t.Errorf("the slow stream got %d before it was closed, want %d", n, subscriberBuffer)
	}
	h.Unsubscribe(slow) // a handler's deferred Unsubscribe after the drop is harmless
	h.Unsubscribe(fast)
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
