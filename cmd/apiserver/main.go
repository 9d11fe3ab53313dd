// Command apiserver runs mkube's API server with an embedded etcd (or an
// external etcd cluster given by --etcd-servers): it reads its flags into
// app.Options and runs the server apiserver/app assembles.
package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mkube/mkube/apiserver/admission"
	"github.com/mkube/mkube/apiserver/app"
	"github.com/mkube/mkube/apiserver/authorization"
	"github.com/mkube/mkube/internal/logging"
)

func main() {
	var o app.Options
	port := flag.Int("port", 8080, "the learner's port: plain HTTP, no authentication (0 disables)")
	securePort := flag.Int("secure-port", 6443, "port to serve the Kubernetes API on over HTTPS (HTTP/2), as kube-apiserver (0 disables)")
	flag.StringVar(&o.AdvertiseAddress, "advertise-address", "", "the address the default/kubernetes Service's Endpoints give for this API server (default: the host's first non-loopback IPv4)")
	flag.StringVar(&o.EndpointReconcilerType, "endpoint-reconciler-type", app.EndpointReconcilerLease, "how the default/kubernetes Endpoints are kept: lease (every live API server, each renewing its key under /registry/masterleases/ in etcd every 10 s, 15 s TTL) or none (the Service only)")
	flag.StringVar(&o.CertDir, "cert-dir", "", "where the CA, the serving and client certificates and admin.kubeconfig are kept (default DATA-DIR/pki)")
	bind := flag.String("bind-address", "0.0.0.0", "address the secure port listens on")
	insecureBind := flag.String("insecure-bind-address", "127.0.0.1", "address the plain port listens on: this host only, as kube-apiserver's old insecure port, unless you say otherwise (0.0.0.0 in docker compose, for the host's port mapping)")
	flag.StringVar(&o.DataDir, "data-dir", "mkube-data", "directory of the embedded etcd")
	flag.StringVar(&o.EtcdServers, "etcd-servers", "", "comma-separated URLs of an external etcd cluster; empty runs etcd embedded")
	flag.StringVar(&o.EtcdClientURL, "etcd-client-url", "", "also serve the embedded etcd here (e.g. http://127.0.0.1:2379), for etcdctl")
	flag.StringVar(&o.EtcdClientURL, "etcd-listen-client-urls", "", "the same as --etcd-client-url, under etcd's own name")
	flag.StringVar(&o.EtcdAdvertiseClientURL, "etcd-advertise-client-urls", "", "the client URL the embedded member tells its peers and etcdctl (default --etcd-client-url, 0.0.0.0 as 127.0.0.1)")
	// A cluster of embedded members, one beside each API server (stacked,
	// as kubeadm and k3s run it): etcd's own flags, prefixed with etcd-.
	flag.StringVar(&o.EtcdCluster.Name, "etcd-name", "", "this embedded etcd member's name in --etcd-initial-cluster")
	flag.StringVar(&o.EtcdCluster.InitialCluster, "etcd-initial-cluster", "", "every member of the embedded etcd cluster, NAME=PEER-URL,... (e.g. cp1=http://cp1:2380,cp2=http://cp2:2380,cp3=http://cp3:2380); empty runs a single member")
	flag.StringVar(&o.EtcdCluster.InitialClusterState, "etcd-initial-cluster-state", "new", "new: the members form the cluster together; existing: this member joins a running cluster (after etcdctl member add)")
	flag.StringVar(&o.EtcdCluster.InitialClusterToken, "etcd-initial-cluster-token", "mkube-etcd-cluster", "keeps members of two clusters apart")
	flag.StringVar(&o.EtcdCluster.ListenPeerURL, "etcd-listen-peer-urls", "", "where the embedded member listens for its peers (e.g. http://0.0.0.0:2380)")
	flag.StringVar(&o.EtcdCluster.AdvertisePeerURL, "etcd-advertise-peer-urls", "", "how its peers reach the embedded member: its URL in --etcd-initial-cluster (default --etcd-listen-peer-urls)")
	flag.DurationVar(&o.CompactionInterval, "compaction-interval", 5*time.Minute, "how often etcd history is compacted (0 disables)")
	flag.IntVar(&o.WatchCacheSize, "watch-cache-size", 4096, "recent events kept per resource for watchers")
	flag.StringVar(&o.StorageMediaType, "storage-media-type", "application/json", "the format objects are stored in etcd: application/json (readable with etcdctl) or application/vnd.kubernetes.protobuf (Kubernetes' default: smaller, faster); either is read, whatever this says")
	flag.BoolVar(&o.Profiling, "profiling", true, "serve Go profiles at /debug/pprof/")
	logLevel := flag.String("log-level", "info", "debug, info, warn or error")
	enableAdmission := flag.String("enable-admission-plugins", "", "admission plugins to enable besides the default ones (comma-separated); mkube has "+strings.Join(admission.Names(admission.Plugins), ", "))
	disableAdmission := flag.String("disable-admission-plugins", "", "admission plugins to disable, though on by default (comma-separated)")
	flag.StringVar(&o.AuthorizationModes, "authorization-mode", authorization.DefaultModes, "who may do what, after system:masters, which may do anything: Node (kubelets: what their own pods use), RBAC, AlwaysAllow, in order (comma-separated)")
	flag.StringVar(&o.ControlPlaneEndpoint, "control-plane-endpoint", "", "HOST:PORT of this API server in the components' kubeconfigs, as kubeadm's flag (default 127.0.0.1:SECURE-PORT; apiserver:6443 in docker compose)")
	flag.StringVar(&o.KubeconfigDir, "kubeconfig-dir", "", "where the components' kubeconfigs (controller-manager, scheduler, kubelet-fleet, kubelet-NODE) and ca.crt are written (default CERT-DIR); apart from it, they can be handed out without the CA's key")
	flag.StringVar(&o.NodeKubeconfigs, "node-kubeconfigs", "", "nodes (comma-separated) to sign a kubelet certificate for, system:node:NAME in system:nodes, and write kubelet-NAME.kubeconfig, as kubeadm writes each node's kubelet.conf")
	flag.StringVar(&o.Kubelet.CertFile, "kubelet-client-certificate", "", "client certificate (PEM) the API server presents to kubelets, for logs, exec, attach, port-forward and nodes/proxy (default: CERT-DIR/apiserver-kubelet-client.crt, made at the first start, user kube-apiserver-kubelet-client, bound to system:kubelet-api-admin)")
	flag.StringVar(&o.Kubelet.KeyFile, "kubelet-client-key", "", "the key of --kubelet-client-certificate")
	flag.StringVar(&o.Kubelet.CAFile, "kubelet-certificate-authority", "", "CA bundle (PEM) the kubelets' serving certificates are verified against; empty verifies none, as kube-apiserver (kubelets sign their own)")
	registerAuthnFlags(&o.Authentication)
	flag.Parse()

	o.Log = logging.New("apiserver", *logLevel)
	if *port != 0 {
		o.PlainAddress = net.JoinHostPort(*insecureBind, strconv.Itoa(*port))
	}
	if *securePort != 0 {
		o.SecureAddress = net.JoinHostPort(*bind, strconv.Itoa(*securePort))
	}
	o.EnableAdmissionPlugins, o.DisableAdmissionPlugins = admission.ParseList(*enableAdmission), admission.ParseList(*disableAdmission)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := app.NewConfig(o)
	if err != nil {
		exit(o.Log, err)
	}
	if err := app.New(cfg).Run(ctx); err != nil {
		exit(o.Log, err)
	}
}

// exit logs the step that failed, with its error, and exits 1.
func exit(log *slog.Logger, err error) {
	var failed *app.Error
	switch {
	case !errors.As(err, &failed):
		log.Error("start", "err", err)
	case failed.Err == nil:
		log.Error(failed.Step)
	default:
		log.Error(failed.Step, "err", failed.Err)
	}
	os.Exit(1)
}
