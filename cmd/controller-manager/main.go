// Command controller-manager runs mkube's controllers against an API server.
//
// It serves /metrics, /healthz, /readyz and /livez over HTTPS on
// --secure-port (10257, kube-controller-manager's; 0 disables) at
// --bind-address (127.0.0.1), /metrics to the users the API server allows
// (nonResourceURLs get /metrics), as kube-controller-manager does.
//
// Several controller managers may run: with --leader-elect (on by
// default, as kube-controller-manager's) each campaigns for the Lease
// kube-system/kube-controller-manager, and only its holder starts the
// controllers (and their informers). One that loses the Lease exits with
// status 1, as kube-controller-manager does; one told to stop (SIGTERM)
// releases it for a standby first.
package main

import (
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"flag"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/leaderelection"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager"
	"github.com/mkube/mkube/controllermanager/certificates"
	"github.com/mkube/mkube/controllermanager/deployment"
	"github.com/mkube/mkube/controllermanager/garbagecollector"
	"github.com/mkube/mkube/controllermanager/nodelifecycle"
	"github.com/mkube/mkube/controllermanager/persistentvolume"
	"github.com/mkube/mkube/controllermanager/podautoscaler"
	"github.com/mkube/mkube/controllermanager/replicaset"
	"github.com/mkube/mkube/controllermanager/resourcequota"
	"github.com/mkube/mkube/controllermanager/rootcacertpublisher"
	"github.com/mkube/mkube/controllermanager/tainteviction"
	"github.com/mkube/mkube/internal/logging"
	"github.com/mkube/mkube/internal/secureserving"
)

// kubeControllerManagerPort is kube-controller-manager's secure port
// (--secure-port).
const kubeControllerManagerPort = 10257

func main() {
	server := flag.String("server", "http://127.0.0.1:8080", "URL of the API server's plain port (the learner's: no credentials, system:masters)")
	kubeconfig := flag.String("kubeconfig", "", "a kubeconfig naming the API server's secure port and this program's identity (the API server's controller-manager.kubeconfig); instead of --server")
	useSA := flag.Bool("use-service-account-credentials", true, "with --kubeconfig, each controller writes as its own service account kube-system/<name>, with Kubernetes' role for it (kubeadm's setting; Kubernetes' default is false)")
	rsWorkers := flag.Int("replicaset-workers", replicaset.DefaultWorkers, "concurrent ReplicaSet syncs")
	deployWorkers := flag.Int("deployment-workers", deployment.DefaultWorkers, "concurrent Deployment syncs")
	gcWorkers := flag.Int("gc-workers", garbagecollector.DefaultWorkers, "concurrent garbage collector syncs")
	taintWorkers := flag.Int("taint-eviction-workers", tainteviction.DefaultWorkers, "concurrent taint eviction syncs")
	d := nodelifecycle.DefaultOptions
	monitorPeriod := flag.Duration("node-monitor-period", d.MonitorPeriod, "how often the node lifecycle controller checks node health")
	monitorGrace := flag.Duration("node-monitor-grace-period", d.MonitorGracePeriod, "how long a node's kubelet may be silent before its conditions become Unknown and it is tainted unreachable")
	startupGrace := flag.Duration("node-startup-grace-period", d.StartupGracePeriod, "the same, for a node that never reported Ready")
	quotaSyncPeriod := flag.Duration("resource-quota-sync-period", resourcequota.DefaultSyncPeriod, "how often every ResourceQuota's usage is recounted in full (deletions and finished pods are given back at once)")
	quotaWorkers := flag.Int("concurrent-resource-quota-syncs", resourcequota.DefaultWorkers, "concurrent ResourceQuota syncs")
	nodeRoot := flag.String("node-root", "/var/lib/mkube/nodes", "the directory that stands for the nodes' disks, as the kubelets' --node-root: node N's / is DIR/N, where hostPath and local volumes are recycled and deleted")
	nfsRoot := flag.String("nfs-root", "/var/lib/mkube/nfs", "the directory that stands for the NFS servers, as the kubelets' --nfs-root: where nfs volumes are recycled and the mkube.io/hostpath provisioner makes its volumes (DIR/mkube-provisioner)")
	rootCAFile := flag.String("root-ca-file", "", "the cluster's CA certificate (the API server's CERT-DIR/ca.crt), published into every namespace as the ConfigMap kube-root-ca.crt; empty: the CA of --kubeconfig's cluster, and with --server (http) none, an empty ca.crt (an error in the log)")
	signingCert := flag.String("cluster-signing-cert-file", "", "the CA certificate (PEM) the csrsigning controller signs approved CertificateSigningRequests of the kubernetes.io signers with (the API server's CERT-DIR/ca.crt); with --cluster-signing-key-file, else nothing is signed")
	signingKey := flag.String("cluster-signing-key-file", "", "that CA's private key (PEM; the API server's CERT-DIR/ca.key)")
	signingDuration := flag.Duration("cluster-signing-duration", certificates.DefaultDuration, "the longest a signed certificate lives (a CSR's spec.expirationSeconds may ask for less)")
	hpaWorkers := flag.Int("concurrent-horizontal-pod-autoscaler-syncs", podautoscaler.DefaultWorkers, "concurrent HorizontalPodAutoscaler syncs")
	hpaSyncPeriod := flag.Duration("horizontal-pod-autoscaler-sync-period", podautoscaler.DefaultSyncPeriod, "how often each HorizontalPodAutoscaler reads its metrics and rescales its target")
	hpaTolerance := flag.Float64("horizontal-pod-autoscaler-tolerance", podautoscaler.DefaultTolerance, "the distance of the usage-to-target ratio from 1.0 below which no autoscaler rescales (0 means the default)")
	hpaDownscale := flag.Duration("horizontal-pod-autoscaler-downscale-stabilization", podautoscaler.DefaultDownscaleStabilization, "how far back an autoscaler looks for a higher recommendation before it scales down (unless its behavior names a window)")
	hpaCPUInit := flag.Duration("horizontal-pod-autoscaler-cpu-initialization-period", podautoscaler.DefaultCPUInitializationPeriod, "how long after a pod starts its CPU samples may still be start-up work, and are skipped unless it is ready and sampled since")
	hpaReadiness := flag.Duration("horizontal-pod-autoscaler-initial-readiness-delay", podautoscaler.DefaultInitialReadinessDelay, "how long after a pod starts a change of its readiness is still taken as its first")
	logLevel := flag.String("log-level", "info", "debug, info, warn or error")
	serving := secureserving.AddFlags(flag.CommandLine, kubeControllerManagerPort)
	election := leaderelection.AddFlags(flag.CommandLine, "kube-controller-manager")
	flag.Parse()

	log := logging.New("controller-manager", *logLevel)
	// The port first: a port in use stops the controller manager before
	// it waits for the API server.
	var ln net.Listener
	if serving.Enabled() {
		var err error
		if ln, err = serving.Listen(); err != nil {
			log.Error("secure port", "err", err)
			os.Exit(1)
		}
	}
	reg := secureserving.NewRegistry()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := client.FromFlags(ctx, *server, flagSet("server"), *kubeconfig, "mkube-controller-manager", 60*time.Second)
	if err != nil {
		log.Error("api server", "err", err)
		os.Exit(2)
	}
	c.SetMetrics(client.NewMetrics(reg))
	if err := c.WaitForServer(ctx, 60*time.Second); err != nil {
		log.Error("api server unreachable", "err", err)
		os.Exit(1)
	}
	// Read once the API server answers: it makes its CA at its first start.
	rootCA, err := rootcacertpublisher.CAToPublish(*rootCAFile, *kubeconfig)
	if err != nil {
		log.Error("root CA", "err", err)
		os.Exit(1)
	}
	signing := certificates.Options{Duration: *signingDuration}
	if *signingCert != "" && *signingKey != "" {
		var err error
		if signing.CA, signing.Key, err = readCA(*signingCert, *signingKey); err != nil {
			log.Error("cluster signing CA", "err", err)
			os.Exit(1)
		}
	}
	if ln != nil {
		cfg := secureserving.Config{Gatherer: reg, Reviewer: secureserving.NewAPIServerReviewer(c), Log: log}
		if err := serving.Start(ctx, ln, *kubeconfig, cfg, stop); err != nil {
			log.Error("secure port", "err", err)
			os.Exit(1)
		}
	}
	// -replicaset-workers serves ReplicationControllers too, as it always
	// has: they are the same controller. The controllers without a flag
	// run their Kubernetes defaults.
	opts := controllermanager.Options{
		ReplicaSet:            replicaset.Options{Workers: *rsWorkers},
		ReplicationController: replicaset.Options{Workers: *rsWorkers},
		Deployment:            deployment.Options{Workers: *deployWorkers},
		GarbageCollector:      garbagecollector.Options{Workers: *gcWorkers},
		TaintEviction:         tainteviction.Options{Workers: *taintWorkers},
		NodeLifecycle:         nodelifecycle.Options{MonitorPeriod: *monitorPeriod, MonitorGracePeriod: *monitorGrace, StartupGracePeriod: *startupGrace},
		RootCACertPublisher:   rootcacertpublisher.Options{CA: rootCA},
		CSRSigning:            signing,
		ResourceQuota:         resourcequota.Options{Workers: *quotaWorkers, SyncPeriod: *quotaSyncPeriod},
		PersistentVolume:      persistentvolume.Options{NodeRoot: *nodeRoot, NFSRoot: *nfsRoot},
		HorizontalPodAutoscaler: podautoscaler.Options{Workers: *hpaWorkers, SyncPeriod: *hpaSyncPeriod, Tolerance: *hpaTolerance,
			DownscaleStabilizationWindow: *hpaDownscale, CPUInitializationPeriod: *hpaCPUInit, InitialReadinessDelay: *hpaReadiness},
		// On the plain port every request is system:masters': there is
		// no identity to narrow.
		UseServiceAccountCredentials: *useSA && *kubeconfig != "",
		QueueMetrics:                 workqueue.NewMetricsProvider(reg),
	}
	err = election.Run(ctx, c, log, leaderelection.NewMetrics(reg), func(ctx context.Context) error {
		controllermanager.Run(ctx, c, log, opts)
		return nil
	})
	if errors.Is(err, leaderelection.ErrLost) {
		log.Error("leaderelection lost", "err", err)
		os.Exit(1)
	}
	if err != nil {
		log.Error("leader election", "err", err)
		os.Exit(1)
	}
}

// flagSet reports whether flag name was given on the command line.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// readCA reads the signing CA's certificate and key files.
func readCA(certFile, keyFile string) (*x509.Certificate, crypto.Signer, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, nil, err
	}
	return certificates.LoadCA(certPEM, keyPEM)
}
