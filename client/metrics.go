package client

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are client-go's rest_client_* series (k8s.io/client-go/tools/metrics
// as component-base registers them), in one component's registry.
type Metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// NewMetrics registers the REST client series in reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rest_client_requests_total",
			Help: "Number of HTTP requests, partitioned by status code, method, and host."}, []string{"code", "method", "host"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rest_client_request_duration_seconds",
			Help:    "Request latency in seconds. Broken down by verb, and host.",
			Buckets: []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0}}, []string{"verb", "host"}),
	}
	reg.MustRegister(m.requests, m.latency)
	return m
}

// SetMetrics makes c, and the clients made from it afterwards
// (Impersonate), record every request in m. Call it before use.
func (c *Client) SetMetrics(m *Metrics) { c.metrics = m }

// observe records one request: its time to the response's headers (what
// client-go measures) and its code, "<error>" when none came back.
func (m *Metrics) observe(method, rawURL string, resp *http.Response, took time.Duration) {
	if m == nil {
		return
	}
	host := ""
	if u, err := url.Parse(rawURL); err == nil {
		host = u.Host
	}
	code := "<error>"
	if resp != nil {
		code = strconv.Itoa(resp.StatusCode)
	}
	m.requests.WithLabelValues(code, method, host).Inc()
	m.latency.WithLabelValues(method, host).Observe(took.Seconds())
}
