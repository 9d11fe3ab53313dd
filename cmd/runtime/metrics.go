package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metricsPath is where containerd serves its metrics on its [metrics]
// address.
const metricsPath = "/v1/metrics"

// serveMetrics serves the runtime's own series on l at /v1/metrics until
// ctx ends, as containerd does at its [metrics] address: plain HTTP, for
// anyone who reaches the address (containerd's default binds none; so
// does --metrics-address). The series are its CRI calls (grpc), Go's and
// the process's.
func serveMetrics(ctx context.Context, l net.Listener, grpcMetrics *grpcprom.ServerMetrics) error {
	reg := prometheus.NewRegistry()
	reg.MustRegister(grpcMetrics, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle(metricsPath, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
