// Command runtime is mkube's container runtime, its containerd: it serves
// Kubernetes' Container Runtime Interface on a unix socket, for the
// kubelet and for crictl.
//
//	runtime --listen unix:///var/run/mkube/runtime.sock
//	crictl --runtime-endpoint unix:///var/run/mkube/runtime.sock version
//	crictl --runtime-endpoint unix:///var/run/mkube/runtime.sock exec -it <container> sh
//
// Each call that changes something is logged in plain words ("ran pod
// sandbox", "started container"), so its log shows what the kubelet asks
// of a runtime; --log-level debug adds every call, reads included.
// --metrics-address serves Prometheus metrics at /v1/metrics, as
// containerd's [metrics] address (metrics.go).
package main

import (
	"context"
	"errors"
	"flag"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"syscall"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"

	"github.com/mkube/mkube/cri"
	"github.com/mkube/mkube/internal/logging"
)

func main() {
	listen := flag.String("listen", "unix:///var/run/mkube/runtime.sock", "the CRI endpoint to serve, unix:///path/to/socket")
	podCIDR := flag.String("pod-cidr", cri.DefaultPodCIDR.String(), "pod sandboxes get their IPs from this IPv4 range")
	pullDelay := flag.Duration("image-pull-delay", 0, "how long each image pull takes")
	streamingAddr := flag.String("streaming-address", "127.0.0.1:0", "host:port of the streaming server that exec, attach and port-forward connect to (containerd's stream_server_address and _port): the kubelet must reach it there")
	peerAddr := flag.String("pod-network-address", "127.0.0.1:0", "host:port at which the other nodes' runtimes reach this node's pods (the pod network's tunnel end, as flannel's VXLAN port): the kubelet writes it on its Node, and the other kubelets route this node's pod CIDR to it")
	nodeRoot := flag.String("node-root", "/var/lib/mkube/nodes", "the directory that stands for the nodes' disks, shared with the kubelet: node N's / is DIR/N, where the kubelet sets up volumes and hostPath volumes live")
	logLevel := flag.String("log-level", "info", "debug, info, warn or error; debug shows every CRI call")
	metricsAddr := flag.String("metrics-address", "", "host:port to serve Prometheus metrics at, path /v1/metrics (containerd's [metrics] address); empty serves none")
	flag.Parse()

	log := logging.New("runtime", *logLevel)
	cidr, err := netip.ParsePrefix(*podCIDR)
	if err != nil {
		log.Error("--pod-cidr", "err", err)
		os.Exit(1)
	}
	pl, err := net.Listen("tcp", *peerAddr)
	if err != nil {
		log.Error("--pod-network-address", "err", err)
		os.Exit(1)
	}
	advertised := *peerAddr // a name the other nodes resolve, as node01-runtime:10011 in compose
	if _, port, _ := net.SplitHostPort(advertised); port == "0" {
		advertised = pl.Addr().String()
	}
	var ml net.Listener // the metrics' listener, with --metrics-address
	var grpcMetrics *grpcprom.ServerMetrics
	if *metricsAddr != "" {
		if ml, err = net.Listen("tcp", *metricsAddr); err != nil {
			log.Error("--metrics-address", "err", err)
			os.Exit(1)
		}
		grpcMetrics = grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram())
	}
	srv, err := cri.New(cri.Options{PodCIDR: cidr, ImagePullDelay: *pullDelay, Log: log, NodeRoot: *nodeRoot, PeerAddress: advertised, GRPCMetrics: grpcMetrics})
	if err != nil {
		log.Error("runtime", "err", err)
		os.Exit(1)
	}
	l, err := cri.Listen(*listen)
	if err != nil {
		log.Error("listen", "err", err)
		os.Exit(1)
	}
	sl, err := net.Listen("tcp", *streamingAddr)
	if err != nil {
		log.Error("--streaming-address", "err", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	streamedc := make(chan error, 1) // the streaming server's result; it stops with ctx
	go func() { streamedc <- srv.ServeStreaming(ctx, sl) }()
	peeredc := make(chan error, 1) // the pod network peers' server's
	go func() { peeredc <- srv.ServePeers(ctx, pl) }()
	metricsc := make(chan error, 1) // the metrics server's
	if ml != nil {
		go func() { metricsc <- serveMetrics(ctx, ml, grpcMetrics) }()
		log.Info("serving metrics", "address", ml.Addr().String(), "path", metricsPath)
	} else {
		metricsc <- nil
	}
	log.Info("serving CRI", "endpoint", *listen, "podCIDR", cidr, "podNetworkAddress", advertised, "imagePullDelay", *pullDelay)
	if err := srv.Serve(ctx, l); err != nil {
		log.Error("runtime", "err", err)
		os.Exit(1)
	}
	stop()
	if err := errors.Join(<-streamedc, <-peeredc, <-metricsc); err != nil {
		log.Error("runtime", "err", err)
		os.Exit(1)
	}
	log.Info("runtime stopped")
}
