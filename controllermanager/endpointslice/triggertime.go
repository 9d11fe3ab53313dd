package endpointslice

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/internal/podcondition"
)

// triggerTimes computes the endpoints.kubernetes.io/last-change-trigger-time
// annotation as Kubernetes' TriggerTimeTracker does: the time of the
// earliest change, since the previous sync of the Service, that this
// sync's writes reflect. A pod's change is the last transition of its
// Ready condition, a Service's its creation. Subtracting the annotation
// from the time a proxy applies the slice measures the whole pipeline's
// latency (kube-proxy's network programming latency SLI).
//
// Worked example: web-1 turns Ready at 10:00:01, web-2 at 10:00:03, and
// one sync sees both: the annotation is 10:00:01. The next sync, with no
// pod changed, computes zero: no annotation is written.
type triggerTimes struct {
	mu    sync.Mutex
	state map[string]*seen // by Service key
}

// seen is what the previous sync of a Service saw.
type seen struct {
	pods    map[string]time.Time // by pod name: its Ready transition
	service time.Time
}

func newTriggerTimes() *triggerTimes { return &triggerTimes{state: map[string]*seen{}} }

// compute returns the trigger time of this sync of svc over pods, and
// remembers what it saw; zero means none.
func (t *triggerTimes) compute(key string, svc *corev1.Service, pods []*corev1.Pod) time.Time {
	t.mu.Lock()
	prev, known := t.state[key]
	t.mu.Unlock()
	now := &seen{pods: map[string]time.Time{}, service: svc.CreationTimestamp.Time}
	var earliest time.Time
	earlier := func(at time.Time) {
		if earliest.IsZero() || at.Before(earliest) {
			earliest = at
		}
	}
	for _, pod := range pods {
		c := podcondition.Get(pod, corev1.PodReady)
		if c == nil || c.LastTransitionTime.IsZero() {
			continue
		}
		now.pods[pod.Name] = c.LastTransitionTime.Time
		if !known || c.LastTransitionTime.After(prev.pods[pod.Name]) {
			earlier(c.LastTransitionTime.Time)
		}
	}
	if known && now.service.After(prev.service) {
		earlier(now.service)
	}
	t.mu.Lock()
	t.state[key] = now
	t.mu.Unlock()
	if !known {
		return svc.CreationTimestamp.Time // a Service seen for the first time: its creation
	}
	return earliest
}

// forget drops a deleted Service.
func (t *triggerTimes) forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.state, key)
}
