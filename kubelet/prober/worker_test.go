package prober

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// scripted answers each run by the time since the container started.
type scripted struct {
	clock *clocktesting.FakeClock
	start time.Time
	fails func(since time.Duration) bool
	runs  []string
}

func (s *scripted) Run(_ context.Context, t Target) (Result, string) {
	since := s.clock.Since(s.start)
	s.runs = append(s.runs, fmt.Sprintf("%s@%v", t.Kind, since))
	if s.fails(since) {
		return Failure, "cat: can't open '/tmp/healthy': No such file or directory"
	}
	return Success, ""
}

func probe(delay, period, failures, successes int32) *corev1.Probe {
	return &corev1.Probe{InitialDelaySeconds: delay, PeriodSeconds: period, TimeoutSeconds: 1,
		FailureThreshold: failures, SuccessThreshold: successes,
		ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/healthy"}}}}
}

// timeline probes c's kind every period for d, as the worker's ticker
// would, and returns the result changes with when they happened.
func timeline(t *testing.T, c corev1.Container, kinds []Kind, d time.Duration, fails func(Kind, time.Duration) bool) []string {
	t.Helper()
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clock := clocktesting.NewFakeClock(start)
	var changes []string
	runners := map[Kind]*scripted{}
	var m *Manager
	m = NewManager(Options{Clock: clock, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Runner: runnerFunc(func(ctx context.Context, tg Target) (Result, string) { return runners[tg.Kind].Run(ctx, tg) }),
		OnChange: func(_ context.Context, ch Change) {
			changes = append(changes, fmt.Sprintf("%v %s=%s", clock.Since(start), ch.Kind, ch.Result))
		}})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid-1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
	workers := map[Kind]*worker{}
	for _, kind := range kinds {
		runners[kind] = &scripted{clock: clock, start: start, fails: func(s time.Duration) bool { return fails(kind, s) }}
		w := newWorker(m, pod, c, kind, probesOf(c)[kind])
		w.setContainer(pod, Container{ID: "c1", StartedAt: start})
		m.workers[workerKey{pod.UID, c.Name, kind}] = w
		workers[kind] = w
	}
	for now := time.Duration(0); now <= d; now += time.Second {
		clock.SetTime(start.Add(now))
		for _, kind := range kinds { // each ticks on its own period, from 0
			if now%seconds(probesOf(c)[kind].PeriodSeconds, 10) == 0 {
				workers[kind].probeOnce(context.Background())
			}
		}
	}
	return changes
}

type runnerFunc func(context.Context, Target) (Result, string)

func (f runnerFunc) Run(ctx context.Context, t Target) (Result, string) { return f(ctx, t) }

func TestWorkerTimeline(t *testing.T) {
	never := func(Kind, time.Duration) bool { return false }
	for _, tc := range []struct {
		name  string
		c     corev1.Container
		kinds []Kind
		fails func(Kind, time.Duration) bool
		want  string
	}{{
		// The docs' liveness exec example: /tmp/healthy is removed at
		// 30 s; probes every 5 s after 5 s, 3 failures: killed at 40 s.
		name: "liveness exec, file removed at 30s", kinds: []Kind{Liveness},
		c:     corev1.Container{Name: "liveness", LivenessProbe: probe(5, 5, 3, 1)},
		fails: func(_ Kind, s time.Duration) bool { return s >= 30*time.Second },
		want:  "40s Liveness=Failure",
	}, {
		name: "liveness never failing never changes", kinds: []Kind{Liveness},
		c: corev1.Container{Name: "c", LivenessProbe: probe(0, 10, 3, 1)}, fails: never,
		want: "",
	}, {
		name: "readiness: ready at the first success after the initial delay", kinds: []Kind{Readiness},
		c: corev1.Container{Name: "c", ReadinessProbe: probe(5, 10, 3, 1)}, fails: never,
		want: "10s Readiness=Success",
	}, {
		name: "readiness: three successes needed, then unready after three failures", kinds: []Kind{Readiness},
		c:     corev1.Container{Name: "c", ReadinessProbe: probe(0, 5, 3, 3)},
		fails: func(_ Kind, s time.Duration) bool { return s >= 30*time.Second && s < 50*time.Second },
		// successes at 0,5,10 → ready at 10; failures 30,35,40 → unready at
		// 40; successes 50,55,60 → ready again at 60.
		want: "10s Readiness=Success, 40s Readiness=Failure, 1m0s Readiness=Success",
	}, {
		name: "startup holds liveness until it succeeds", kinds: []Kind{Startup, Liveness},
		c: corev1.Container{Name: "c", StartupProbe: probe(0, 10, 30, 1), LivenessProbe: probe(0, 5, 1, 1)},
		// liveness would fail at once, but starts only after startup at 20s
		fails: func(k Kind, s time.Duration) bool { return k == Startup && s < 20*time.Second || k == Liveness },
		want:  "20s Startup=Success, 20s Liveness=Failure",
	}, {
		name: "startup failing failureThreshold times kills", kinds: []Kind{Startup},
		c:     corev1.Container{Name: "c", StartupProbe: probe(0, 10, 3, 1)},
		fails: func(Kind, time.Duration) bool { return true },
		want:  "20s Startup=Failure",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(timeline(t, tc.c, tc.kinds, 70*time.Second, tc.fails), ", ")
			if got != tc.want {
				t.Errorf("changes: %q\nwant      %q", got, tc.want)
			}
		})
	}
}

// After a liveness kill the instance is not probed again; a restart (a
// new instance) starts over from the initial result.
func TestWorkerHoldsAKilledInstanceAndResetsOnRestart(t *testing.T) {
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clock := clocktesting.NewFakeClock(start)
	runs := 0
	var changes []Result
	m := NewManager(Options{Clock: clock, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Runner:   runnerFunc(func(context.Context, Target) (Result, string) { runs++; return Failure, "boom" }),
		OnChange: func(_ context.Context, ch Change) { changes = append(changes, ch.Result) }})
	c := corev1.Container{Name: "c", LivenessProbe: probe(0, 1, 2, 1)}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u"}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
	w := newWorker(m, pod, c, Liveness, c.LivenessProbe)
	m.workers[workerKey{"u", "c", Liveness}] = w
	w.setContainer(pod, Container{ID: "a", StartedAt: start})
	for range 5 {
		w.probeOnce(context.Background())
	}
	if runs != 2 || len(changes) != 1 || !m.KilledByProbe("u", "c", "a") {
		t.Fatalf("runs %d, changes %v, killed %v: want 2 runs, one Failure, instance a held", runs, changes, m.KilledByProbe("u", "c", "a"))
	}
	w.setContainer(pod, Container{ID: "b", StartedAt: start})
	if m.KilledByProbe("u", "c", "b") || w.resultFor("b") != Success {
		t.Fatalf("the new instance starts alive and unheld")
	}
	w.probeOnce(context.Background())
	w.probeOnce(context.Background())
	if runs != 4 || len(changes) != 2 {
		t.Errorf("runs %d, changes %v: want the new instance probed and killed too", runs, changes)
	}
}

func TestStatus(t *testing.T) {
	m := NewManager(Options{})
	c := corev1.Container{Name: "c"}
	if started, ready := m.Status("u", c, "x"); !started || !ready {
		t.Errorf("no probes: started %v ready %v, want both", started, ready)
	}
	c.ReadinessProbe = probe(0, 1, 1, 1)
	if _, ready := m.Status("u", c, "x"); ready {
		t.Errorf("a readiness probe with no result yet: ready")
	}
}
