package secureserving

import (
	"context"
	"net"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/utils/clock"
)

// NewRegistry is a component's own registry, with the Go runtime's and
// the process's collectors (go_*, process_*) as every Kubernetes
// component has: never the process-wide default, so that components run
// in one test process each show only their own series.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Start serves cfg on ln (from Listen) in the background until ctx ends,
// over TLS with the client CA of ClientCAs(kubeconfig). A failure to
// serve is logged and then fail is called (the component stops).
func (o *Options) Start(ctx context.Context, ln net.Listener, kubeconfig string, cfg Config, fail func()) error {
	cas, err := o.ClientCAs(kubeconfig)
	if err != nil {
		return err
	}
	tlsCfg, err := o.TLSConfig(clock.RealClock{}, cas)
	if err != nil {
		return err
	}
	cfg.AlwaysAllowPaths = o.AlwaysAllowPaths
	cfg.Log.Info("serving securely", "address", ln.Addr().String(), "paths", "/metrics,/healthz,/readyz,/livez",
		"selfSigned", o.CertFile == "", "clientCA", cas != nil)
	go func() { // owner: the component; returns when ctx ends
		if err := Serve(ctx, ln, tlsCfg, Handler(cfg), cfg.Log); err != nil {
			cfg.Log.Error("secure port", "err", err)
			fail()
		}
	}()
	return nil
}
