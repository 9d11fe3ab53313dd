// Command controller-manager runs mkube's controllers against an API server.
package main

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager"
	"github.com/mkube/mkube/internal/logging"
)

func main() {
	server := flag.String("server", "http://127.0.0.1:8080", "URL of the API server")
	rsWorkers := flag.Int("replicaset-workers", 5, "concurrent ReplicaSet syncs")
	deployWorkers := flag.Int("deployment-workers", 5, "concurrent Deployment syncs")
	gcWorkers := flag.Int("gc-workers", 20, "concurrent garbage collector syncs")
	taintWorkers := flag.Int("taint-eviction-workers", 8, "concurrent taint eviction syncs")
	logLevel := flag.String("log-level", "info", "debug, info, warn or error")
	flag.Parse()

	log := logging.New("controller-manager", *logLevel)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := client.New(*server, "mkube-controller-manager")
	if err := c.WaitForServer(ctx, 60*time.Second); err != nil {
		log.Error("api server unreachable", "err", err)
		os.Exit(1)
	}
	controllermanager.Run(ctx, c, log, controllermanager.Options{
		ReplicaSetWorkers: *rsWorkers, DeploymentWorkers: *deployWorkers, GCWorkers: *gcWorkers,
		TaintEvictionWorkers: *taintWorkers})
}
