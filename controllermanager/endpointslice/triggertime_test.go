package endpointslice

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTheTriggerTimeIsTheEarliestChangeSinceTheLastSync(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 10, 0, 0, 0, time.UTC)
	svc := webService()
	svc.CreationTimestamp = metav1.NewTime(t0)
	readyAt := func(p *corev1.Pod, at time.Time) *corev1.Pod {
		p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(at)
		return p
	}
	tt := newTriggerTimes()
	steps := []struct {
		what string
		pods []*corev1.Pod
		want time.Time
	}{
		{"a Service's first sync: its creation", []*corev1.Pod{readyAt(runningPod(1), t0.Add(time.Second))}, t0},
		{"nothing changed: no trigger time", []*corev1.Pod{readyAt(runningPod(1), t0.Add(time.Second))}, time.Time{}},
		{"two pods turned Ready: the earlier", []*corev1.Pod{readyAt(runningPod(1), t0.Add(5*time.Second)),
			readyAt(runningPod(2), t0.Add(3*time.Second))}, t0.Add(3 * time.Second)},
		{"a pod gone is no change of one that stays", []*corev1.Pod{readyAt(runningPod(2), t0.Add(3*time.Second))}, time.Time{}},
	}
	for _, st := range steps {
		if got := tt.compute("default/web", svc, st.pods); !got.Equal(st.want) {
			t.Errorf("%s: got %v, want %v", st.what, got, st.want)
		}
	}
	tt.forget("default/web")
	if got := tt.compute("default/web", svc, nil); !got.Equal(t0) {
		t.Errorf("a forgotten Service starts again from its creation: got %v", got)
	}
}
