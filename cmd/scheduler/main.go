// Command scheduler runs mkube's scheduler against an API server: it
// watches unbound pods and binds each to a node (steps 9 and 10 of the
// pod creation flow).
//
// --config FILE reads a KubeSchedulerConfiguration (YAML or JSON) that
// enables, disables and weighs plugins; see scheduler/config-example.yaml.
// Flags given explicitly win over the file.
//
// It serves /metrics, /healthz, /readyz and /livez over HTTPS on
// --secure-port (10259, kube-scheduler's; 0 disables) at --bind-address
// (127.0.0.1), /metrics to the users the API server allows
// (nonResourceURLs get /metrics), as kube-scheduler does.
//
// Several schedulers may run: with --leader-elect (on by default, as
// kube-scheduler's) each starts its informers, then campaigns for the
// Lease kube-system/kube-scheduler, and only its holder schedules. A
// scheduler that loses the Lease exits with status 1, as kube-scheduler
// does; one told to stop (SIGTERM) releases it for a standby first.
package main

import (
	"context"
	"errors"
	"flag"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/leaderelection"
	"github.com/mkube/mkube/internal/logging"
	"github.com/mkube/mkube/internal/secureserving"
	"github.com/mkube/mkube/internal/seedstep"
	"github.com/mkube/mkube/scheduler"
	"github.com/mkube/mkube/scheduler/config"
	"github.com/mkube/mkube/scheduler/metrics"
	"github.com/mkube/mkube/scheduler/queue"
)

// kubeSchedulerPort is kube-scheduler's secure port (--secure-port).
const kubeSchedulerPort = 10259

func main() {
	server := flag.String("server", "http://127.0.0.1:8080", "URL of the API server's plain port (the learner's: no credentials, system:masters)")
	kubeconfig := flag.String("kubeconfig", "", "a kubeconfig naming the API server's secure port and this program's identity (the API server's scheduler.kubeconfig); instead of --server")
	logLevel := flag.String("log-level", "info", "debug, info, warn or error; debug shows every node's filter outcome and score")
	name := flag.String("scheduler-name", corev1.DefaultSchedulerName, "schedule the pods whose spec.schedulerName is this")
	percentage := flag.Int("percentage-of-nodes-to-score", 0, "in clusters of 100+ nodes, stop filtering once this percentage of nodes fits (0: Kubernetes' adaptive default)")
	initialBackoff := flag.Duration("pod-initial-backoff", queue.DefaultPodInitialBackoff, "backoff of a pod after its first failed attempt; doubles per attempt")
	maxBackoff := flag.Duration("pod-max-backoff", queue.DefaultPodMaxBackoff, "longest backoff of a pod")
	maxUnschedulable := flag.Duration("pod-max-in-unschedulable-pods-duration", queue.DefaultPodMaxInUnschedulablePodsDuration, "retry an unschedulable pod after this long even if no cluster event suggested it")
	configFile := flag.String("config", "", "a KubeSchedulerConfiguration file (YAML or JSON): plugins, weights, percentageOfNodesToScore (see scheduler/config-example.yaml)")
	serving := secureserving.AddFlags(flag.CommandLine, kubeSchedulerPort)
	election := leaderelection.AddFlags(flag.CommandLine, "kube-scheduler")
	flag.Parse()

	log := logging.New("scheduler", *logLevel)
	// The port first: a port in use stops the scheduler before it waits
	// for the API server.
	var ln net.Listener
	if serving.Enabled() {
		var err error
		if ln, err = serving.Listen(); err != nil {
			log.Error("secure port", "err", err)
			os.Exit(1)
		}
	}
	reg := secureserving.NewRegistry()
	var profile *config.Profile
	if *configFile != "" {
		cfg, err := config.Load(*configFile)
		if err != nil {
			log.Error("config", "err", err)
			os.Exit(1)
		}
		profile = cfg.Profile()
		if !flagSet("percentage-of-nodes-to-score") {
			*percentage = int(cfg.Percentage())
		}
		if !flagSet("scheduler-name") && profile.SchedulerName != "" {
			*name = profile.SchedulerName
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	c, err := client.FromFlags(ctx, *server, flagSet("server"), *kubeconfig, "mkube-scheduler", 60*time.Second)
	if err != nil {
		log.Error("api server", "err", err)
		os.Exit(2)
	}
	c.SetMetrics(client.NewMetrics(reg))
	if err := c.WaitForServer(ctx, 60*time.Second); err != nil {
		log.Error("api server", "err", err)
		os.Exit(1)
	}
	s, err := scheduler.New(scheduler.Config{
		Client:                            c,
		Log:                               log,
		SchedulerName:                     *name,
		PercentageOfNodesToScore:          int32(*percentage),
		Profile:                           profile,
		PodInitialBackoff:                 *initialBackoff,
		PodMaxBackoff:                     *maxBackoff,
		PodMaxInUnschedulablePodsDuration: *maxUnschedulable,
		Metrics:                           metrics.New(reg),
		Steps:                             seedstep.NewDurations(reg, nil),
	})
	if err != nil {
		log.Error("scheduler", "err", err)
		os.Exit(1)
	}
	if ln != nil {
		cfg := secureserving.Config{Gatherer: reg, Reviewer: secureserving.NewAPIServerReviewer(c), Log: log,
			Ready: []secureserving.Check{{Name: "sched-handler-sync", Run: func() error {
				if !s.HasSynced() {
					return errors.New("informers not synced")
				}
				return nil
			}}}}
		if err := serving.Start(ctx, ln, *kubeconfig, cfg, stop); err != nil {
			log.Error("secure port", "err", err)
			os.Exit(1)
		}
	}
	log.Info("starting scheduler", "server", *server, "kubeconfig", *kubeconfig, "user", c.Identity().User, "scheduler", *name, "config", *configFile,
		"leaderElect", election.LeaderElect)
	// The informers first, leader or not: a standby keeps a warm cache
	// and queue, and writes nothing until it leads.
	if !s.Start(ctx) {
		log.Info("scheduler stopped")
		return
	}
	err = election.Run(ctx, c, log, leaderelection.NewMetrics(reg), s.Run)
	switch {
	case errors.Is(err, leaderelection.ErrLost):
		log.Error("leaderelection lost", "err", err)
		os.Exit(1)
	case err != nil && ctx.Err() == nil:
		log.Error("scheduler", "err", err)
		os.Exit(1)
	}
	log.Info("scheduler stopped")
}

// flagSet reports whether flag name was given on the command line.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
