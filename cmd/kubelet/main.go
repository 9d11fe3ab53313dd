// Command kubelet runs mkube's fake kubelet: it registers one Node and
// runs the pods bound to it through a container runtime over CRI, mkube's
// own (package cri) started in-process or, with
// --container-runtime-endpoint, a bin/runtime of its own.
//
//	kubelet --server http://127.0.0.1:8080 --node-name node01 --cpu 4 --memory 8Gi
//	kubelet --kubeconfig mkube-data/pki/kubelet-node01.kubeconfig --cpu 4 --memory 8Gi
//	kubelet --kubeconfig mkube-data/pki/kubelet-fleet.kubeconfig --node-name fake --nodes 5000
//	kubelet --server http://127.0.0.1:8080 --node-name node01 --container-runtime-endpoint unix:///var/run/mkube/runtime.sock
package main

import (
	"context"
	"crypto/x509"
	"flag"
	"fmt"
	"math"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/logging"
	"github.com/mkube/mkube/kubelet"
	kubeletserver "github.com/mkube/mkube/kubelet/server"
)

func main() {
	server := flag.String("server", "http://127.0.0.1:8080", "URL of the API server's plain port (the learner's: no credentials, system:masters)")
	kubeconfig := flag.String("kubeconfig", "", "a kubeconfig naming the API server's secure port and this kubelet's identity: the node's own (the API server's kubelet-NODE.kubeconfig, made with --node-kubeconfigs) or, for --nodes, kubelet-fleet.kubeconfig; instead of --server")
	nodeName := flag.String("node-name", "", "name of the Node to register (default: the node the kubeconfig's certificate names, else the host name)")
	cpu := flag.String("cpu", "4", "CPUs the node offers (capacity and allocatable)")
	memory := flag.String("memory", "8Gi", "memory the node offers")
	pods := flag.Int("pods", 110, "maximum number of pods on the node")
	maxVolumes := flag.Int("max-volumes", 0, "how many volumes of mkube's provisioner (mkube.io/hostpath) the node can have attached: the allocatable count of the driver hostpath.csi.mkube.io in its CSINode, which the scheduler's NodeVolumeLimits enforces (0: no limit)")
	labels := flag.String("labels", "", "extra node labels, k=v,k2=v2")
	taints := flag.String("register-with-taints", "", "taints to register the node with, key=value:Effect or key:Effect, comma-separated")
	nodeIP := flag.String("node-ip", "", "the node's InternalIP (default: 10.240.N.1, N from the number the node name ends with)")
	podCIDR := flag.String("pod-cidr", "", "range of the node's pod IPs (default: 10.244.N.0/24, N as for --node-ip)")
	clusterDNS := flag.String("cluster-dns", kubelet.DefaultClusterDNS.String(), "the cluster DNS Service's IPs, comma-separated: the nameservers of pods of dnsPolicy ClusterFirst (\"\": none, such pods get the node's DNS)")
	clusterDomain := flag.String("cluster-domain", kubelet.DefaultClusterDomain, "the cluster's DNS domain, which pods search after their namespace's")
	unsafeSysctls := flag.String("allowed-unsafe-sysctls", "", "sysctls beyond the safe set that pods may set on this node, names or prefix* patterns, comma-separated: \"kernel.msg*,net.core.somaxconn\"; namespaced ones only")
	statusInterval := flag.Duration("status-interval", 10*time.Second, "how often the node status and lease are renewed")
	runtimeEndpoint := flag.String("container-runtime-endpoint", "", "the CRI runtime's socket, unix:///path/to/runtime.sock (default: start mkube's runtime in this process, on a private socket)")
	pullDelay := flag.Duration("image-pull-delay", 300*time.Millisecond, "how long an image pull takes in the in-process runtime (an external runtime has its own --image-pull-delay)")
	podLogsDir := flag.String("pod-logs-dir", kubelet.DefaultPodLogsDir, "where the runtime writes container logs and the kubelet reads them")
	nodeRoot := flag.String("node-root", "/var/lib/mkube/nodes", "the directory that stands for the nodes' disks, shared with the runtime: node N's / is DIR/N, where pods' volumes are set up and hostPath volumes live")
	nfsRoot := flag.String("nfs-root", "/var/lib/mkube/nfs", "the directory that stands for the NFS servers: an nfs volume of server S and path P is DIR/S/P, shared by every node that sees DIR")
	syncFrequency := flag.Duration("sync-frequency", kubelet.DefaultSyncFrequency, "how often the kubelet refreshes its pods' ConfigMap, Secret, downward API and projected volumes")
	evictionPeriod := flag.Duration("eviction-monitoring-period", kubelet.DefaultEvictionMonitoringPeriod, "how often the eviction manager measures the pods' emptyDirs, writable layers and logs against their sizeLimit and ephemeral-storage limits (Kubernetes' fixed 10s)")
	address := flag.String("address", "0.0.0.0", "address the kubelet API (container logs) listens on")
	port := flag.Int("port", 10250, "port of the kubelet API")
	tlsCertFile := flag.String("tls-cert-file", "", "the kubelet API's serving certificate (PEM); without it and --tls-private-key-file, a self-signed one is made and kept in --cert-dir")
	tlsKeyFile := flag.String("tls-private-key-file", "", "the key of --tls-cert-file")
	certDir := flag.String("cert-dir", "/var/lib/mkube/kubelet/pki", "where the self-signed serving certificate (kubelet.crt, kubelet.key) is made at the first start and reused after (\"\": in memory only)")
	clientCAFile := flag.String("client-ca-file", "", "CA bundle (PEM): a client certificate it signed authenticates to the kubelet API as its CN, in the groups of its O (the API server's --kubelet-client-certificate; the cluster's ca.crt)")
	anonymousAuth := flag.Bool("anonymous-auth", true, "let requests to the kubelet API without credentials in, as system:anonymous in the group system:unauthenticated (kubeadm turns it off)")
	tokenWebhook := flag.Bool("authentication-token-webhook", false, "authenticate bearer tokens on the kubelet API with TokenReviews to the API server")
	authzMode := flag.String("authorization-mode", kubeletserver.AlwaysAllow, "how the kubelet API authorizes requests: AlwaysAllow, or Webhook (a SubjectAccessReview to the API server of the verb on nodes/stats, nodes/metrics, nodes/log, nodes/spec or nodes/proxy, as kubeadm configures it)")
	backOffInitial := flag.Duration("crash-loop-backoff-initial", kubelet.DefaultBackOffInitial, "delay before restarting a container that exited again soon after its restart, or pulling again an image whose pull failed; doubles each time")
	backOffMax := flag.Duration("crash-loop-backoff-max", kubelet.DefaultBackOffMax, "the longest such delay (CrashLoopBackOff, ImagePullBackOff); running twice as long resets it")
	manifests := flag.String("pod-manifest-path", "", "directory of static pod manifests the kubelet runs itself, showing each as a mirror pod")
	fileCheck := flag.Duration("file-check-frequency", kubelet.DefaultFileCheckFrequency, "how often the static pod manifests are read again")
	reportFrequency := flag.Duration("node-status-report-frequency", 0, "write the node status only when it changed or is this old (0: at every --status-interval; Kubernetes' 5m is the default with --nodes)")
	nodes := flag.Int("nodes", 1, "how many nodes this process runs (NAME-1 … NAME-N, zero-padded), sharing one API connection, one runtime and one kubelet port, for scale tests")
	logLevel := flag.String("log-level", "info", "debug, info, warn or error")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	userAgent := "kubelet"
	if *nodeName != "" {
		userAgent += "/" + *nodeName
	}
	c, err := client.FromFlags(ctx, *server, flagSet("server"), *kubeconfig, userAgent, 60*time.Second)
	if err != nil {
		fail("%v", err)
	}
	if node, ok := kubelet.NodeOf(c.Identity()); ok && *nodeName == "" {
		*nodeName = node
	}
	if *nodeName == "" {
		h, err := os.Hostname()
		if err != nil {
			fail("--node-name: %v", err)
		}
		*nodeName = h
	}
	log := logging.New("kubelet", *logLevel)
	cfg := kubelet.Config{NodeName: *nodeName, StatusInterval: *statusInterval, ImagePullDelay: *pullDelay, Log: log,
		Address: *address, Port: *port, RuntimeEndpoint: *runtimeEndpoint, PodLogsDir: *podLogsDir,
		NodeRoot: *nodeRoot, NFSRoot: *nfsRoot, SyncFrequency: *syncFrequency, EvictionMonitoringPeriod: *evictionPeriod,
		BackOffInitial: *backOffInitial, BackOffMax: *backOffMax, PodManifestPath: *manifests, FileCheckFrequency: *fileCheck}
	switch *authzMode {
	case kubeletserver.AlwaysAllow, kubeletserver.Webhook:
	default:
		fail("--authorization-mode: %q: want AlwaysAllow or Webhook", *authzMode)
	}
	cfg.Auth = &kubeletserver.Auth{Anonymous: *anonymousAuth, TokenWebhook: *tokenWebhook, Mode: *authzMode}
	if *clientCAFile != "" {
		pemData, err := os.ReadFile(*clientCAFile)
		if err != nil {
			fail("--client-ca-file: %v", err)
		}
		cfg.Auth.ClientCAs = x509.NewCertPool()
		if !cfg.Auth.ClientCAs.AppendCertsFromPEM(pemData) {
			fail("--client-ca-file: %s holds no PEM certificate", *clientCAFile)
		}
	}
	cfg.Serving = kubeletserver.Serving{CertFile: *tlsCertFile, KeyFile: *tlsKeyFile, CertDir: *certDir}
	if cfg.Capacity, err = kubelet.Capacity(*cpu, *memory, *pods); err != nil {
		fail("%v", err)
	}
	if *maxVolumes < 0 || *maxVolumes > math.MaxInt32 {
		fail("--max-volumes: %d: want 0 (no limit) to %d", *maxVolumes, math.MaxInt32)
	}
	cfg.MaxVolumes = int32(*maxVolumes)
	if cfg.Labels, err = kubelet.ParseLabels(*labels); err != nil {
		fail("--labels: %v", err)
	}
	if cfg.Taints, err = kubelet.ParseTaints(*taints); err != nil {
		fail("--register-with-taints: %v", err)
	}
	if *nodeIP != "" {
		if cfg.NodeIP, err = netip.ParseAddr(*nodeIP); err != nil {
			fail("--node-ip: %v", err)
		}
	}
	cfg.ClusterDNS, cfg.ClusterDomain = []netip.Addr{}, *clusterDomain
	for _, ip := range strings.FieldsFunc(*clusterDNS, func(r rune) bool { return r == ',' }) {
		addr, err := netip.ParseAddr(strings.TrimSpace(ip))
		if err != nil {
			fail("--cluster-dns: %v", err)
		}
		cfg.ClusterDNS = append(cfg.ClusterDNS, addr)
	}
	if *podCIDR != "" {
		if cfg.PodCIDR, err = netip.ParsePrefix(*podCIDR); err != nil {
			fail("--pod-cidr: %v", err)
		}
	}

	// The runtime first: a kubelet that cannot reach it exits at once,
	// saying why, rather than wait for the API server.
	if *nodes < 1 {
		fail("--nodes: %d: want at least 1", *nodes)
	}
	if cfg.AllowedUnsafeSysctls, err = kubelet.ParseAllowedUnsafeSysctls(*unsafeSysctls); err != nil {
		fail("%v", err)
	}
	cfg.NodeStatusReportFrequency = *reportFrequency
	if *nodes > 1 {
		cfg.Workers = 1 // per node: thousands of nodes need few goroutines each
		if cfg.NodeStatusReportFrequency == 0 {
			cfg.NodeStatusReportFrequency = 5 * time.Minute
		}
	}
	k, err := kubelet.NewFleet(c, cfg, kubelet.NodeNames(*nodeName, *nodes))
	if err != nil {
		log.Error("kubelet", "err", err)
		os.Exit(1)
	}
	if err := c.WaitForServer(ctx, 60*time.Second); err != nil {
		log.Error("api server", "err", err)
		os.Exit(1)
	}
	if err := k.Run(ctx); err != nil && ctx.Err() == nil {
		log.Error("kubelet", "err", err)
		os.Exit(1)
	}
}

// flagSet reports whether flag name was given on the command line.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "kubelet: "+format+"\n", args...)
	os.Exit(2)
}
