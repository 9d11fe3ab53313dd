package prober

import (
	"context"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	kubecontainer "github.com/mkube/mkube/kubelet/container"
)

// Kind is which of a container's probes a worker runs.
type Kind string

const (
	Liveness  Kind = "Liveness"
	Readiness Kind = "Readiness"
	Startup   Kind = "Startup"
)

// Result is a probe's verdict.
type Result int

const (
	Unknown Result = iota
	Success
	Failure
)

func (r Result) String() string {
	switch r {
	case Success:
		return "Success"
	case Failure:
		return "Failure"
	}
	return "Unknown"
}

// Container is a running container instance as the kubelet knows it.
type Container struct {
	ID        string // the runtime's container ID: a new one is a new instance
	StartedAt time.Time
}

// Target is what one probe run is about.
type Target struct {
	Pod       *corev1.Pod
	Container corev1.Container
	ID        string // the container instance's ID
	Kind      Kind
	Probe     *corev1.Probe
}

// Runner runs one probe and says how it went, with the output a failure
// event shows ("HTTP probe failed with statuscode: 500").
type Runner interface {
	Run(ctx context.Context, t Target) (Result, string)
}

// Change is a worker's result changing (thresholds passed): what the
// kubelet acts on.
type Change struct {
	Target
	Result Result
	Output string
}

// Options are what a Manager needs.
type Options struct {
	Runner Runner
	// OnChange is called, from the worker's goroutine, when a probe's
	// result changes. It must not block for long.
	OnChange func(context.Context, Change)
	// OnFailedRun is called after every failed run (the kubelet's
	// Unhealthy events), thresholds or not.
	OnFailedRun func(t Target, output string)
	Clock       clock.WithTicker
	Log         *slog.Logger
}

// Manager keeps the workers of every pod of a node.
type Manager struct {
	opts    Options
	mu      sync.Mutex
	workers map[workerKey]*worker
}

type workerKey struct {
	pod       types.UID
	container string
	kind      Kind
}

// NewManager returns a Manager with no workers.
func NewManager(opts Options) *Manager {
	return &Manager{opts: opts, workers: map[workerKey]*worker{}}
}

// Sync tells the workers of pod's containers which instance of each
// runs now (running, by name), starting a worker for each probe of a
// container the first time it runs. A container not running is not
// probed, but its worker stays, remembering whether a probe killed it,
// until the pod goes (Remove). Call it after each sync of the pod.
func (m *Manager) Sync(ctx context.Context, pod *corev1.Pod, running map[string]Container) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range Probed(pod) {
		cur, ok := running[c.Name]
		for kind, probe := range probesOf(c) {
			key := workerKey{pod.UID, c.Name, kind}
			w := m.workers[key]
			if w == nil && !ok {
				continue
			}
			if w == nil {
				w = newWorker(m, pod, c, kind, probe)
				m.workers[key] = w
				go w.run(ctx)
			}
			w.setContainer(pod, cur)
		}
	}
}

// SyncSandbox is Sync with the containers of sb that run now (after a
// sync of pod), so that the workers probe their current instances.
func (m *Manager) SyncSandbox(ctx context.Context, pod *corev1.Pod, sb *kubecontainer.PodSandbox) {
	running := map[string]Container{}
	if sb != nil {
		for name, rc := range sb.Containers {
			if rc.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
				running[name] = Container{ID: rc.RawID, StartedAt: rc.StartedAt}
			}
		}
	}
	m.Sync(ctx, pod, running)
}

// UpdatePodStatus marks sb's running containers with what their probes
// say, for the status the kubelet reports.
func (m *Manager) UpdatePodStatus(pod *corev1.Pod, sb *kubecontainer.PodSandbox) {
	if sb == nil {
		return
	}
	for _, c := range Probed(pod) {
		rc := sb.Containers[c.Name]
		if rc == nil || rc.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		started, ready := m.Status(pod.UID, c, rc.RawID)
		rc.NotStarted, rc.NotReady = !started, !ready
	}
}

// Remove stops the workers of the pod with uid: it is gone or finished.
func (m *Manager) Remove(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for key, w := range m.workers {
		if key.pod == uid {
			w.stop()
			delete(m.workers, key)
		}
	}
}

// Status is what the probes say of a container instance: whether it has
// started (its startup probe succeeded, or it has none) and whether it
// is ready (started, and its readiness probe succeeded, or it has none).
func (m *Manager) Status(uid types.UID, c corev1.Container, id string) (started, ready bool) {
	started, ready = true, true
	if c.StartupProbe != nil {
		started = m.result(workerKey{uid, c.Name, Startup}, id) == Success
	}
	if c.ReadinessProbe != nil {
		ready = m.result(workerKey{uid, c.Name, Readiness}, id) == Success
	}
	return started, started && ready
}

// result is the worker's result for the instance id; Unknown if it has
// none (no worker yet, or one still on an older instance).
func (m *Manager) result(key workerKey, id string) Result {
	m.mu.Lock()
	w := m.workers[key]
	m.mu.Unlock()
	if w == nil {
		return Unknown
	}
	return w.resultFor(id)
}

// KilledByProbe reports whether the container instance id was killed
// because its liveness or startup probe failed: it restarts unless the
// pod's policy is Never, whatever its exit code.
func (m *Manager) KilledByProbe(uid types.UID, name, id string) bool {
	for _, kind := range []Kind{Liveness, Startup} {
		m.mu.Lock()
		w := m.workers[workerKey{uid, name, kind}]
		m.mu.Unlock()
		if w != nil && w.killed(id) {
			return true
		}
	}
	return false
}

// Workers is how many workers run: one per probe of each running
// container.
func (m *Manager) Workers() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.workers)
}

// Probed are the containers of pod that may have probes: its sidecars
// (init containers with restartPolicy Always, which run beside the app)
// and its app containers.
func Probed(pod *corev1.Pod) []corev1.Container {
	var out []corev1.Container
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			out = append(out, c)
		}
	}
	return append(out, pod.Spec.Containers...)
}

// probesOf are c's probes by kind.
func probesOf(c corev1.Container) map[Kind]*corev1.Probe {
	out := map[Kind]*corev1.Probe{}
	if c.LivenessProbe != nil {
		out[Liveness] = c.LivenessProbe
	}
	if c.ReadinessProbe != nil {
		out[Readiness] = c.ReadinessProbe
	}
	if c.StartupProbe != nil {
		out[Startup] = c.StartupProbe
	}
	return out
}
