package catalog

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
)

// resourceConsumerImage is registry.k8s.io/e2e-test-images/resource-consumer,
// the image Kubernetes' HPA e2e tests scale (test/images/resource-consumer):
// /consumer (ENTRYPOINT) serves on -port (8080; the HPA specs' idle
// sidecar runs a second one on 8081) and, asked by a
// POST, consumes exactly what it is told: /ConsumeCPU?millicores=N&durationSec=S
// runs a consume-cpu process using N millicores (at most a core each, as
// the real one is one thread) for S seconds; /ConsumeMem?megabytes=N&durationSec=S
// runs `stress -m 1 --vm-bytes NM --vm-hang 0 -t S`; /BumpMetric?metric=M&delta=D&durationSec=S
// raises a custom metric that /metrics shows in Prometheus' format.
// /controller, in the same image (and agnhost's resource-consumer-controller,
// which the tests run today), is the tests' fan-out (consumerctrl.go).
func resourceConsumerImage() Image {
	img := alpineImage()
	img.Entrypoint, img.Cmd = []string{"/consumer"}, nil
	img.Ports = []int32{8080}
	img.Programs = map[string]shell.Program{"consumer": resourceConsumer, "consume-cpu": consumeCPU,
		"stress": stress, "controller": consumerController}
	img.Serve = resourceConsumerServe
	return img
}

// consumerState is what a running resource-consumer holds: its custom
// metrics and the memory its stress processes hold.
type consumerState struct {
	mu      sync.Mutex
	metrics map[string]float64
	memory  int64
	ctx     context.Context // ends when the consumer is killed
}

var consumerStates sync.Map // *shell.Process → *consumerState

func resourceConsumer(ctx context.Context, p *shell.Process, args []string, _ io.Writer) (int, error) {
	port := lib.IntFlag(goFlags(args), "port", 8080)
	consumerStates.Store(p, &consumerState{metrics: map[string]float64{}, ctx: ctx})
	defer consumerStates.Delete(p)
	if err := lib.ListenUntilStopped(ctx, p, int32(port)); err != nil {
		return 137, err
	}
	return agnhostExitOnSignal, nil
}

// goFlags is args as pflag spells them: the consumer's programs use Go's
// flag package, which takes -name=value as --name=value.
func goFlags(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") {
			a = "-" + a
		}
		out[i] = a
	}
	return out
}

// consumeCPU is consume-cpu -millicores=N -duration-sec=S on its own.
func consumeCPU(ctx context.Context, p *shell.Process, args []string, _ io.Writer) (int, error) {
	args = goFlags(args)
	millicores, secs := lib.IntFlag(args, "millicores", 0), lib.IntFlag(args, "duration-sec", 0)
	return 0, useCPUFor(ctx, p, int64(millicores), time.Duration(secs)*time.Second)
}

// useCPUFor keeps millicores (at most a core: one thread) busy for d.
func useCPUFor(ctx context.Context, p *shell.Process, millicores int64, d time.Duration) error {
	release := p.CPU().Use(min(max(millicores, 0), 1000))
	defer release()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-p.Clock.After(d):
		return nil
	}
}

// resourceConsumerServe answers the consumer's or the controller's
// requests, as the container's command line says which it is.
func resourceConsumerServe(c Running, _ int32, conn net.Conn) {
	if flags, ok := splitCommand(c.Argv, "controller"); ok {
		lib.ServeHTTP(conn, controllerHandler(c, flags))
		return
	}
	st, ok := consumerStates.Load(c.Process)
	if !ok {
		conn.Close()
		return
	}
	lib.ServeHTTP(conn, withCPU(c.Process, goHandlerCPU, st.(*consumerState).handler(c.Process)))
}

// The consumer's answers, as test/images/resource-consumer words them.
const (
	consumerBadRequest      = "Bad request. Not a POST request"
	consumerUnknownFunction = "unknown function"
	consumerIncorrectArg    = "incorrect function argument"
	consumerMissingArg      = "not given function argument"
)

// ints reads the form's named integers; ok is false with the error
// answered.
func ints(w http.ResponseWriter, form url.Values, names ...string) (values []int, ok bool) {
	for _, n := range names {
		if form.Get(n) == "" {
			http.Error(w, consumerMissingArg, http.StatusBadRequest)
			return nil, false
		}
	}
	for _, n := range names {
		v, err := strconv.Atoi(form.Get(n))
		if err != nil {
			http.Error(w, consumerIncorrectArg, http.StatusBadRequest)
			return nil, false
		}
		values = append(values, v)
	}
	return values, true
}

func (st *consumerState) handler(p *shell.Process) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.URL.Path, "/metrics") { // GET or POST
			st.writeMetrics(w)
			return
		}
		if r.Method != http.MethodPost {
			http.Error(w, consumerBadRequest, http.StatusBadRequest)
			return
		}
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		switch r.URL.Path {
		case "/ConsumeCPU":
			v, ok := ints(w, r.Form, "millicores", "durationSec")
			if !ok {
				return
			}
			goLog(p, fmt.Sprintf("ConsumeCPU millicores: %v, durationSec: %v", v[0], v[1]))
			go useCPUFor(st.ctx, p, int64(v[0]), time.Duration(v[1])*time.Second)
			fmt.Fprintf(w, "ConsumeCPU\n%d millicores\n%d durationSec\n", v[0], v[1])
		case "/ConsumeMem":
			v, ok := ints(w, r.Form, "megabytes", "durationSec")
			if !ok {
				return
			}
			goLog(p, fmt.Sprintf("ConsumeMem megabytes: %v, durationSec: %v", v[0], v[1]))
			go st.useMemoryFor(p, int64(v[0])<<20, time.Duration(v[1])*time.Second)
			fmt.Fprintf(w, "ConsumeMem\n%d megabytes\n%d durationSec\n", v[0], v[1])
		case "/BumpMetric":
			metric, delta := r.Form.Get("metric"), r.Form.Get("delta")
			if metric == "" || delta == "" || r.Form.Get("durationSec") == "" {
				http.Error(w, consumerMissingArg, http.StatusBadRequest)
				return
			}
			d, err := strconv.ParseFloat(delta, 64)
			secs, err2 := strconv.Atoi(r.Form.Get("durationSec"))
			if err != nil || err2 != nil {
				http.Error(w, consumerIncorrectArg, http.StatusBadRequest)
				return
			}
			go st.bumpMetric(p, metric, d, time.Duration(secs)*time.Second)
			fmt.Fprintf(w, "BumpMetric\n%s metric\n%v delta\n%d durationSec\n", metric, d, secs)
		case "/GetCurrentStatus":
			io.WriteString(w, "Warning: not implemented!\nGetCurrentStatus")
		default:
			http.Error(w, consumerUnknownFunction+": "+r.URL.Path, http.StatusNotFound)
		}
	})
}

// useMemoryFor is a stress process holding bytes for d. One that would
// pass the container's limit is OOM-killed alone (the largest process
// of the cgroup), so the container goes on without it.
func (st *consumerState) useMemoryFor(p *shell.Process, bytes int64, d time.Duration) {
	st.mu.Lock()
	if err := p.UseMemory(st.memory + bytes); err != nil {
		p.UseMemory(st.memory)
		st.mu.Unlock()
		goLog(p, "Error while consuming memory: signal: killed")
		return
	}
	st.memory += bytes
	st.mu.Unlock()
	select {
	case <-st.ctx.Done():
	case <-p.Clock.After(d):
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.memory -= bytes
	p.UseMemory(st.memory)
}

func (st *consumerState) bumpMetric(p *shell.Process, metric string, delta float64, d time.Duration) {
	st.mu.Lock()
	st.metrics[metric] += delta
	st.mu.Unlock()
	select {
	case <-st.ctx.Done():
	case <-p.Clock.After(d):
	}
	st.mu.Lock()
	st.metrics[metric] -= delta
	st.mu.Unlock()
}

// writeMetrics is /metrics: each custom metric as a gauge.
func (st *consumerState) writeMetrics(w io.Writer) {
	st.mu.Lock()
	defer st.mu.Unlock()
	names := make([]string, 0, len(st.metrics))
	for n := range st.metrics {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "# HELP %s info message.\n# TYPE %s gauge\n%s %f\n", n, n, n, st.metrics[n])
	}
}
