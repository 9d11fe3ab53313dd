package apiserver

import (
	"bufio"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/types"
)

// longRunningSubresources are kube-apiserver's: requests that hold their
// connection (BasicLongRunningRequestCheck), counted in
// apiserver_longrunning_requests and not in the in-flight gauge.
var longRunningSubresources = map[string]bool{"attach": true, "exec": true, "proxy": true, "log": true, "portforward": true}

// instrument is the outermost filter: it counts and times every request
// in apiserver_request_total and apiserver_request_duration_seconds, with
// kube-apiserver's labels (MonitorRequest), and keeps the in-flight and
// long-running gauges.
func (s *Server) instrument(next http.Handler) http.Handler {
	m := s.metrics
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l := requestLabels(r)
		began := s.clock.Now()
		longRunning := l.verb == "WATCH" || l.verb == "CONNECT" || longRunningSubresources[l.subresource]
		if longRunning {
			g := m.longRunning.WithLabelValues(l.verb, l.group, l.version, l.resource, l.subresource, l.scope, "apiserver")
			g.Inc()
			defer g.Dec()
		} else {
			kind := "readOnly"
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				kind = "mutating"
			}
			g := m.inflight.WithLabelValues(kind)
			g.Inc()
			defer g.Dec()
		}
		rw := &codeWriter{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(rw, r)
		m.requests.WithLabelValues(l.verb, l.dryRun, l.group, l.version, l.resource, l.subresource, l.scope, "apiserver",
			strconv.Itoa(rw.code)).Inc()
		if !longRunning { // a watch lasts as long as its client wants: no latency
			m.durations.WithLabelValues(l.verb, l.dryRun, l.group, l.version, l.resource, l.subresource, l.scope, "apiserver").
				Observe(s.clock.Since(began).Seconds())
		}
	})
}

// requestMetricLabels are one request's, as kube-apiserver reports them.
type requestMetricLabels struct{ verb, dryRun, group, version, resource, subresource, scope string }

// requestLabels: verb is the HTTP method, LIST for a GET of a
// collection, WATCH for a watch, APPLY for a server-side apply, CONNECT
// for exec, attach, port-forward and proxy; scope is resource (one
// object), namespace or cluster; a request that is not for a resource
// has only its verb.
func requestLabels(r *http.Request) requestMetricLabels {
	l := requestMetricLabels{verb: r.Method}
	info, ok := parseRequestInfo(r)
	if !ok {
		return l
	}
	l.group, l.version, l.resource, l.subresource = info.GroupVersion.Group, info.GroupVersion.Version, info.Resource, info.Subresource
	switch {
	case info.Name != "":
		l.scope = "resource"
	case info.Namespace != "":
		l.scope = "namespace"
	default:
		l.scope = "cluster"
	}
	switch {
	case info.Verb == "watch":
		l.verb = "WATCH"
	case r.Method == http.MethodGet && l.scope != "resource":
		l.verb = "LIST"
	case r.Method == http.MethodPatch && r.Header.Get("Content-Type") == string(types.ApplyPatchType):
		l.verb = "APPLY"
	case l.subresource == "exec" || l.subresource == "attach" || l.subresource == "portforward" || l.subresource == "proxy":
		l.verb = "CONNECT"
	}
	if dry := r.URL.Query()["dryRun"]; len(dry) > 0 {
		l.dryRun = strings.Join(dry, ",")
	}
	return l
}

// codeWriter remembers the status code, and passes on Flush (watches)
// and Hijack (exec's upgrades).
type codeWriter struct {
	http.ResponseWriter
	code        int
	wroteHeader bool
}

func (w *codeWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.code, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *codeWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	return w.ResponseWriter.Write(b)
}

func (w *codeWriter) Flush() {
	w.wroteHeader = true
	http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *codeWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil && !w.wroteHeader {
		w.code, w.wroteHeader = http.StatusSwitchingProtocols, true
	}
	return conn, rw, err
}

func (w *codeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// serveMetrics answers /metrics from the server's registry, and
// serveSLIs /metrics/slis; RBAC guards both (nonResourceURLs get).
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}

func (s *Server) serveSLIs(w http.ResponseWriter, r *http.Request) {
	promhttp.HandlerFor(s.metrics.slis.registry, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}
