package apiserver

import (
	"github.com/prometheus/client_golang/prometheus"
)

// healthSLIs are component-base's health-check SLIs, served at
// /metrics/slis from a registry of their own, as kube-apiserver serves
// them: kubernetes_healthcheck{name,type} (1 when the check last passed)
// and kubernetes_healthchecks_total{name,type,status}.
type healthSLIs struct {
	registry *prometheus.Registry
	last     *prometheus.GaugeVec
	total    *prometheus.CounterVec
}

func newHealthSLIs() *healthSLIs {
	h := &healthSLIs{
		registry: prometheus.NewRegistry(),
		last: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kubernetes_healthcheck",
			Help: "This metric records the result of a single healthcheck."}, []string{"name", "type"}),
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kubernetes_healthchecks_total",
			Help: "This metric records the results of all healthcheck."}, []string{"name", "type", "status"}),
	}
	h.registry.MustRegister(h.last, h.total)
	return h
}

// observe records one check of kind (healthz, livez, readyz).
func (h *healthSLIs) observe(name, kind string, err error) {
	status, value := "success", 1.0
	if err != nil {
		status, value = "error", 0
	}
	h.last.WithLabelValues(name, kind).Set(value)
	h.total.WithLabelValues(name, kind, status).Inc()
}
