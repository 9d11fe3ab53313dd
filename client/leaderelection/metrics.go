package leaderelection

import "github.com/prometheus/client_golang/prometheus"

// Metrics holds client-go's leader_election_master_status: 1 while this
// process leads the Lease it is labelled with, 0 while it stands by, so
// that a dashboard shows which replica is the active one.
type Metrics struct{ status *prometheus.GaugeVec }

// NewMetrics registers the gauge in reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{status: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "leader_election_master_status",
		Help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name."},
		[]string{"name"})}
	reg.MustRegister(m.status)
	return m
}

// set records whether the Lease name is led by this process; a nil
// Metrics records nothing.
func (m *Metrics) set(name string, leading bool) {
	if m == nil {
		return
	}
	v := 0.0
	if leading {
		v = 1
	}
	m.status.WithLabelValues(name).Set(v)
}
