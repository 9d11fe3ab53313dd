package fakekubelet

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Kubelet is one fake kubelet, serving HTTPS as kubelets do.
type Kubelet struct {
	*httptest.Server
	// Path is where it serves resource metrics.
	Path string
	// ForwardTo is where a port-forward to any pod connects ("" refuses).
	ForwardTo string

	mu   sync.Mutex
	text string
}

// Start runs a fake kubelet until the test ends, serving HTTPS with a
// self-signed certificate, as a kubelet without --tls-cert-file does
// (mkube's, kubelet/server/tls.go, and a real one).
func Start(t testing.TB, path string) *Kubelet {
	k := &Kubelet{Path: path}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+path, k.serveMetrics)
	mux.HandleFunc("POST /portForward/{namespace}/{pod}", k.servePortForward)
	k.Server = httptest.NewUnstartedServer(mux)
	k.StartTLS()
	t.Cleanup(k.Close)
	return k
}

// Port is the port it listens on, for the Node's daemonEndpoints.
func (k *Kubelet) Port() int32 { return int32(k.Listener.Addr().(*net.TCPAddr).Port) }

// Container is one container's cumulative reading.
type Container struct {
	Namespace, Pod, Name string
	CPUSeconds           float64 // cumulative
	MemoryBytes          uint64
	Started              time.Time // zero: no container_start_time_seconds
}

// Set is the reading the kubelet serves from now on, taken at: the node's
// cumulative CPU seconds and working set, and its containers'.
func (k *Kubelet) Set(at time.Time, nodeCPUSeconds float64, nodeMemoryBytes uint64, containers ...Container) {
	ms := at.UnixMilli()
	sort.Slice(containers, func(i, j int) bool {
		a, b := containers[i], containers[j]
		return a.Namespace+"/"+a.Pod+"/"+a.Name < b.Namespace+"/"+b.Pod+"/"+b.Name
	})
	var b strings.Builder
	series := func(name, help, typ string, line func(c Container) string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
		for _, c := range containers {
			if l := line(c); l != "" {
				fmt.Fprintf(&b, "%s{container=%q,namespace=%q,pod=%q} %s\n", name, c.Name, c.Namespace, c.Pod, l)
			}
		}
	}
	series("container_cpu_usage_seconds_total", "[STABLE] Cumulative cpu time consumed by the container in core-seconds", "counter",
		func(c Container) string { return fmt.Sprintf("%g %d", c.CPUSeconds, ms) })
	series("container_memory_working_set_bytes", "[STABLE] Current working set of the container in bytes", "gauge",
		func(c Container) string { return fmt.Sprintf("%d %d", c.MemoryBytes, ms) })
	series("container_start_time_seconds", "[STABLE] Start time of the container since unix epoch in seconds", "gauge",
		func(c Container) string {
			if c.Started.IsZero() {
				return ""
			}
			return fmt.Sprintf("%g %d", float64(c.Started.UnixNano())/1e9, c.Started.UnixMilli())
		})
	fmt.Fprintf(&b, "# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds\n")
	fmt.Fprintf(&b, "# TYPE node_cpu_usage_seconds_total counter\nnode_cpu_usage_seconds_total %g %d\n", nodeCPUSeconds, ms)
	fmt.Fprintf(&b, "# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes\n")
	fmt.Fprintf(&b, "# TYPE node_memory_working_set_bytes gauge\nnode_memory_working_set_bytes %d %d\n", nodeMemoryBytes, ms)
	k.mu.Lock()
	k.text = b.String()
	k.mu.Unlock()
}

func (k *Kubelet) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	k.mu.Lock()
	text := k.text
	k.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	fmt.Fprint(w, text)
}
