// Command metrics-server is mkube's metrics server on the host: the
// program of registry.k8s.io/metrics-server/metrics-server (package
// metricsserver), which scrapes every kubelet's /metrics/resource and
// serves metrics.k8s.io/v1beta1 for `kubectl top` and the HPA. It takes
// the real one's flags; --kubeconfig names the API server and its
// identity (without it, the in-cluster configuration of a pod).
// addons/metrics-server.yaml runs the same code in the cluster.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/logging"
	"github.com/mkube/mkube/metricsserver"
)

func main() {
	log := logging.New("metrics-server", "info")
	if err := run(log); err != nil {
		log.Error("command failed", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	opts, err := metricsserver.ParseFlags(os.Args[1:])
	if err != nil {
		return err
	}
	log = logging.New("metrics-server", opts.LogLevel())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := clientcmd.BuildConfigFromFlags("", opts.Kubeconfig)
	if err != nil {
		return err
	}
	api, err := client.ForConfig(cfg, "metrics-server")
	if err != nil {
		return err
	}
	kubelets, err := metricsserver.KubeletClient(cfg, opts)
	if err != nil {
		return err
	}
	srv, err := metricsserver.New(ctx, metricsserver.Config{Options: opts, API: api, Kubelets: kubelets, Clock: clock.RealClock{}, Log: log})
	if err != nil {
		return err
	}
	cert, err := metricsserver.ServingCert(opts, os.ReadFile)
	if err != nil {
		return err
	}
	ln, err := tls.Listen("tcp", fmt.Sprintf(":%d", opts.SecurePort), metricsserver.TLSConfig(cert))
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv.TLSHandler()}
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	go srv.Run(ctx)
	log.Info(fmt.Sprintf("Serving securely on [::]:%d", opts.SecurePort), "resolution", opts.MetricResolution)
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
