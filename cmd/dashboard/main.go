// Command dashboard serves mkube's live view for learners (package
// dashboard): the cluster, a pod's 13 steps, the watch stream, why a pod
// went to its node, the numbers of the last hour, and fault buttons, in
// one page on --listen (the learner's loopback by default).
//
// It is a list-watch client of the API server like every component, as
// its own identity: --kubeconfig names the secure port and a user (the
// API server writes dashboard.kubeconfig for mkube:dashboard, whose
// ClusterRole mkube:dashboard only reads), or --server the learner's
// plain port (system:masters: the fault buttons work there).
//
//	dashboard --kubeconfig mkube-data/pki/dashboard.kubeconfig
//	dashboard --server http://127.0.0.1:8080 --listen 127.0.0.1:8090
//
// --scheduler-metrics and --controller-manager-metrics name the
// components' own /metrics (their secure ports, 10259 and 10257), which
// it scrapes as the same identity, for the numbers view's charts:
//
//	dashboard --kubeconfig mkube-data/pki/dashboard.kubeconfig \
//	  --scheduler-metrics https://127.0.0.1:10259/metrics \
//	  --controller-manager-metrics https://127.0.0.1:10257/metrics
package main

import (
	"context"
	"flag"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/dashboard"
	"github.com/mkube/mkube/internal/logging"
)

func main() {
	server := flag.String("server", "http://127.0.0.1:8080", "URL of the API server's plain port (the learner's: no credentials, system:masters)")
	kubeconfig := flag.String("kubeconfig", "", "a kubeconfig naming the API server's secure port and the dashboard's identity (the API server's dashboard.kubeconfig); instead of --server")
	listen := flag.String("listen", "127.0.0.1:8090", "address of the page; the loopback by default, so only this machine's learner sees it")
	logLevel := flag.String("log-level", "info", "debug, info, warn or error")
	schedulerMetrics := flag.String("scheduler-metrics", "", "URL of the scheduler's /metrics (https://127.0.0.1:10259/metrics), scraped as the --kubeconfig identity for the numbers view; empty: its charts say not configured")
	controllerManagerMetrics := flag.String("controller-manager-metrics", "", "URL of the controller manager's /metrics (https://127.0.0.1:10257/metrics), as --scheduler-metrics")
	sampleInterval := flag.Duration("sample-interval", dashboard.SampleInterval, "how often the numbers view samples the metrics API, the caches and the components' /metrics (metrics-server's resolution; tests ask for less)")
	flag.Parse()

	log := logging.New("dashboard", *logLevel)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Error("listen", "err", err)
		os.Exit(1)
	}
	c, err := client.FromFlags(ctx, *server, flagSet("server"), *kubeconfig, "mkube-dashboard", 60*time.Second)
	if err != nil {
		log.Error("api server", "err", err)
		os.Exit(2)
	}
	if err := c.WaitForServer(ctx, 60*time.Second); err != nil {
		log.Error("api server", "err", err)
		os.Exit(1)
	}
	scrape, anonymous, err := dashboard.ScrapeClient(*kubeconfig)
	if err != nil {
		log.Error("metrics scrape client", "err", err)
		os.Exit(2)
	}
	d := dashboard.New(c, log, dashboard.Options{SchedulerMetrics: *schedulerMetrics, ControllerManagerMetrics: *controllerManagerMetrics,
		ScrapeClient: scrape, Anonymous: anonymous, SampleInterval: *sampleInterval})
	srv := &http.Server{Handler: d.Handler(), ReadHeaderTimeout: 10 * time.Second}
	log.Info("serving the dashboard", "url", "http://"+ln.Addr().String(), "server", *server, "kubeconfig", *kubeconfig, "user", c.Identity().User,
		"schedulerMetrics", *schedulerMetrics, "controllerManagerMetrics", *controllerManagerMetrics, "sampleInterval", *sampleInterval)
	if err := d.Run(ctx, srv, func() error { return srv.Serve(ln) }); err != nil {
		log.Error("serve", "err", err)
		os.Exit(1)
	}
	log.Info("dashboard stopped")
}

// flagSet reports whether flag name was given on the command line.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
