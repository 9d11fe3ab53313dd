package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/mkube/mkube/internal/loadbalancer"
	"github.com/mkube/mkube/internal/logging"
)

// runLB is `mkube lb --listen ADDR --backends A:6443,B:6443,C:6443`: the
// one address in front of several API servers (package loadbalancer), what
// docker-compose.ha.yml runs as its service apiserver.
func runLB(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("lb", flag.ContinueOnError)
	fset.SetOutput(stderr)
	listen := fset.String("listen", "0.0.0.0:6443", "the address clients dial as the API server")
	backends := fset.String("backends", "", "the API servers' secure ports, HOST:PORT,... (comma-separated)")
	interval := fset.Duration("health-interval", time.Second, "how often each backend's /readyz is asked")
	if err := fset.Parse(args); err != nil {
		return 2
	}
	if *backends == "" || fset.NArg() > 0 {
		fmt.Fprintln(stderr, "error: lb takes --backends HOST:PORT,... and no arguments")
		return 2
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	log := logging.New("lb", "info")
	log.Info("balancing connections to the API servers", "listen", ln.Addr().String(), "backends", *backends)
	b := &loadbalancer.Balancer{Listener: ln, Backends: strings.Split(*backends, ","), Interval: *interval, Log: log}
	if err := b.Run(ctx); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	return 0
}
