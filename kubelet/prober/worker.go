package prober

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// worker runs one probe of one container, every periodSeconds, for as
// long as the container runs (pkg/kubelet/prober/worker.go). A restart
// (a new container instance) starts its result over.
type worker struct {
	m     *Manager
	kind  Kind
	probe *corev1.Probe
	done  chan struct{}
	once  sync.Once

	mu        sync.Mutex
	pod       *corev1.Pod
	container corev1.Container
	cur       Container // the instance probed now
	// result is the verdict on instance resultID, after the thresholds:
	// it changes once failureThreshold runs in a row failed, or
	// successThreshold runs succeeded.
	result    Result
	resultID  string
	lastRun   Result // the last run's own verdict, and how many in a row
	runsInRow int32
	// onHold is the instance a liveness or startup failure killed: it is
	// not probed again, and restarts whatever its exit code.
	onHold string
}

func newWorker(m *Manager, pod *corev1.Pod, c corev1.Container, kind Kind, probe *corev1.Probe) *worker {
	return &worker{m: m, kind: kind, probe: probe, pod: pod, container: c, done: make(chan struct{})}
}

// initialResult is a new instance's result before any run counts: not
// ready until a readiness probe says so, alive until liveness says not,
// not started until its startup probe succeeds (Kubernetes' initial
// values).
func (k Kind) initialResult() Result {
	switch k {
	case Readiness:
		return Failure
	case Liveness:
		return Success
	}
	return Unknown
}

// setContainer tells the worker of the container's current instance.
func (w *worker) setContainer(pod *corev1.Pod, cur Container) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pod = pod
	if cur.ID != w.cur.ID {
		w.cur = cur
		w.result, w.resultID = w.kind.initialResult(), cur.ID
		w.lastRun, w.runsInRow = Unknown, 0
	}
}

func (w *worker) stop() { w.once.Do(func() { close(w.done) }) }

// run probes at once, then every period, until stopped.
func (w *worker) run(ctx context.Context) {
	t := w.m.opts.Clock.NewTicker(seconds(w.probe.PeriodSeconds, 10))
	defer t.Stop()
	for {
		w.probeOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-w.done:
			return
		case <-t.C():
		}
	}
}

// probeOnce is one tick: a run of the probe, unless the container is not
// to be probed now (killed, waiting for its startup probe or its
// initialDelaySeconds), and the result it leads to.
func (w *worker) probeOnce(ctx context.Context) {
	w.mu.Lock()
	pod, c, cur, result := w.pod, w.container, w.cur, w.result
	skip := cur.ID == "" || w.onHold == cur.ID ||
		(w.kind == Startup && result == Success) || // a startup probe is done once it succeeded
		w.m.opts.Clock.Since(cur.StartedAt) < seconds(w.probe.InitialDelaySeconds, 0)
	w.mu.Unlock()
	if skip {
		return
	}
	if w.kind != Startup && c.StartupProbe != nil && w.m.result(workerKey{pod.UID, c.Name, Startup}, cur.ID) != Success {
		return // the startup probe holds liveness and readiness
	}
	t := Target{Pod: pod, Container: c, ID: cur.ID, Kind: w.kind, Probe: w.probe}
	res, out := w.m.opts.Runner.Run(ctx, t)
	if res == Failure && w.m.opts.OnFailedRun != nil {
		w.m.opts.OnFailedRun(t, out)
	}
	if change, ok := w.count(cur.ID, res); ok {
		w.m.opts.Log.Info("probe result changed", "pod", pod.Namespace+"/"+pod.Name, "container", c.Name, "probe", w.kind,
			"result", change, "output", out)
		if w.m.opts.OnChange != nil {
			w.m.opts.OnChange(ctx, Change{Target: t, Result: change, Output: out})
		}
	}
}

// count adds a run's verdict on instance id to the thresholds and
// returns the result if it changed.
func (w *worker) count(id string, res Result) (Result, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if id != w.cur.ID {
		return Unknown, false // the container restarted meanwhile
	}
	if res == w.lastRun {
		w.runsInRow++
	} else {
		w.lastRun, w.runsInRow = res, 1
	}
	if (res == Failure && w.runsInRow < max(w.probe.FailureThreshold, 1)) ||
		(res == Success && w.runsInRow < max(w.probe.SuccessThreshold, 1)) {
		return Unknown, false
	}
	if res == Failure && w.kind != Readiness {
		w.onHold, w.runsInRow = id, 0 // the kubelet kills it
	}
	if res == w.result {
		return Unknown, false
	}
	w.result = res
	return res, true
}

func (w *worker) resultFor(id string) Result {
	w.mu.Lock()
	defer w.mu.Unlock()
	if id != w.resultID {
		return Unknown
	}
	return w.result
}

func (w *worker) killed(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return id != "" && w.onHold == id
}

// seconds is a probe field in seconds as a duration, def if unset.
func seconds(s int32, def int32) time.Duration {
	if s <= 0 {
		s = def
	}
	return time.Duration(s) * time.Second
}
