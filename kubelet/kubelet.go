package kubelet

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/internal/seedstep"
	"github.com/mkube/mkube/kubelet/backoff"
	"github.com/mkube/mkube/kubelet/config"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
	"github.com/mkube/mkube/kubelet/envvars"
	"github.com/mkube/mkube/kubelet/eviction"
	"github.com/mkube/mkube/kubelet/images"
	"github.com/mkube/mkube/kubelet/kuberuntime"
	"github.com/mkube/mkube/kubelet/lifecycle"
	kubeletmetrics "github.com/mkube/mkube/kubelet/metrics"
	"github.com/mkube/mkube/kubelet/nodelease"
	"github.com/mkube/mkube/kubelet/nodestatus"
	"github.com/mkube/mkube/kubelet/podcertificate"
	"github.com/mkube/mkube/kubelet/prober"
	"github.com/mkube/mkube/kubelet/server"
	"github.com/mkube/mkube/kubelet/status"
	"github.com/mkube/mkube/kubelet/volumemanager"
)

// Config describes the node a Kubelet pretends to be.
type Config struct {
	NodeName string
	NodeIP   netip.Addr   // zero: DefaultNodeIP(NodeName)
	PodCIDR  netip.Prefix // zero: DefaultPodCIDR(NodeName)
	// Capacity is cpu, memory, pods... (see Capacity). Allocatable is the
	// same: a fake node reserves nothing for the system.
	Capacity corev1.ResourceList
	Labels   map[string]string // added to the well-known node labels
	Taints   []corev1.Taint    // set when the node registers
	// MaxVolumes is how many volumes of mkube's provisioner the node can
	// have attached: the allocatable.count of the driver in its CSINode
	// (kubelet/nodestatus), which the scheduler's NodeVolumeLimits counts against
	// (--max-volumes). 0 is no limit.
	MaxVolumes int32

	// NodeStatusReportFrequency, if set, writes the node status only when
	// it is that old or changed; 0 writes it every StatusInterval.
	NodeStatusReportFrequency time.Duration
	// StatusInterval is how often the node status and lease are renewed;
	// 0 means 10s, the kubelet's nodeStatusUpdateFrequency and lease renew
	// interval (a quarter of the 40s lease). A real kubelet then writes the
	// status only if it changed or 5 minutes passed; this one writes it
	// every time, so lastHeartbeatTime visibly moves.
	StatusInterval time.Duration
	// RuntimeEndpoint is the CRI socket of the container runtime,
	// "unix:///var/run/mkube/runtime.sock" (--container-runtime-endpoint).
	// "" starts mkube's runtime in this process, on a private socket.
	RuntimeEndpoint string
	// ImagePullDelay is how long an image pull takes in the in-process
	// runtime (0: instant); an external runtime has its own flag.
	ImagePullDelay time.Duration
	// PodLogsDir is where the runtime writes the containers' logs and the
	// kubelet reads them for `kubectl logs`; "" means DefaultPodLogsDir.
	PodLogsDir string
	// NodeRoot is the directory that stands for the nodes' disks, which
	// the kubelet shares with its runtime: node N's "/" is NodeRoot/N,
	// where its pods' volumes are set up (kubelet/volumemanager). ""
	// sets up none.
	NodeRoot string
	// ClusterDNS are the nameservers of a ClusterFirst pod, the cluster
	// DNS Service's IPs (--cluster-dns); nil means DefaultClusterDNS, an
	// empty list none (such pods then get the node's DNS). ClusterDomain
	// is the cluster's domain ("" means DefaultClusterDomain), and
	// ResolverConfig the node's resolv.conf, node-absolute ("" means
	// DefaultResolverConfig), which a pod of dnsPolicy Default gets (dns.go).
	ClusterDNS    []netip.Addr
	ClusterDomain string
	// AllowedUnsafeSysctls are the sysctls beyond the safe set that pods
	// may set here (--allowed-unsafe-sysctls; package lifecycle's
	// sysctls.go).
	AllowedUnsafeSysctls []string
	ResolverConfig       string
	// NFSRoot stands for the NFS servers: an nfs volume of server S and
	// path P is NFSRoot/S/P, shared by whoever mounts it. "" refuses nfs
	// volumes.
	NFSRoot string
	// SyncFrequency is how often the kubelet refreshes its pods' ConfigMap,
	// Secret, downward API and projected volumes; 0 means Kubernetes' 1m
	// (--sync-frequency).
	SyncFrequency time.Duration
	// EvictionMonitoringPeriod is how often the eviction manager measures
	// the pods' local storage (emptyDir sizeLimit, ephemeral-storage
	// limits) and evicts those over their limits (package eviction); 0 means
	// Kubernetes' 10 s.
	EvictionMonitoringPeriod time.Duration
	// Address and Port are where the kubelet serves its API (container
	// logs); Port 0 takes any free port (tests run many kubelets on one
	// host). The node status reports the port actually used.
	Address string
	Port    int
	// Serving is the port's serving certificate (--tls-cert-file,
	// --tls-private-key-file, --cert-dir): the port is HTTPS, as a real
	// kubelet's, self-signed when no files are named (server/tls.go).
	Serving server.Serving
	// Auth is who may use the kubelet API (--anonymous-auth,
	// --client-ca-file, --authentication-token-webhook,
	// --authorization-mode); nil is the kubelet's defaults, anyone
	// (server.Open). A nil Reviewer asks the API server through the
	// kubelet's client, which system:node lets create TokenReviews and
	// SubjectAccessReviews.
	Auth *server.Auth
	// BackOffInitial and BackOffMax bound the crash-loop back-off
	// (package backoff); 0 means Kubernetes' 10 s and 5 min.
	BackOffInitial, BackOffMax time.Duration
	// PodManifestPath is the directory of static pod manifests
	// (--pod-manifest-path; "" runs none), read every FileCheckFrequency
	// (0 means DefaultFileCheckFrequency).
	PodManifestPath    string
	FileCheckFrequency time.Duration
	// Workers is how many pods are synced at once; 0 means 5. A real
	// kubelet has one goroutine per pod; a few workers are enough for a
	// fake whose only slow step is the pull delay.
	Workers int

	Clock clock.WithTickerAndDelayedExecution // nil: the real clock
	Log   *slog.Logger                        // nil: slog.Default()
}

// Kubelet is one fake node's agent. What it shares with the other nodes
// of its process (the API connection, the runtime, the pod informer) is
// its fleet's.
type Kubelet struct {
	cfg       Config
	fleet     *Fleet
	client    *client.Client
	runtime   *runtimeService
	recorder  *record.Recorder
	informer  *client.Informer         // the fleet's: pods bound to its nodes
	queue     *workqueue.Queue[string] // pod keys, "namespace/name"
	backOff   *backoff.BackOff         // crash-loop back-off, by container
	images    *images.Manager          // pulls the containers' images (package images)
	admission *lifecycle.Admitter      // the pods let in, their allocated resources (package lifecycle)
	lease     *nodelease.Controller    // the node's Lease, the cheap heartbeat (package nodelease)
	// nodeStatus registers the Node and keeps its status fresh (package
	// nodestatus): the Node's name and uid are its, once registered.
	nodeStatus *nodestatus.Manager
	status     *status.Manager   // writes the pod statuses, keeps the failures the kubelet decided
	probes     *prober.Manager   // the containers' liveness, readiness and startup probes (package prober)
	env        *envvars.Builder  // the containers' environments, and their CreateContainerConfigError (package envvars)
	eviction   *eviction.Manager // evicts the pods over their local storage limits (package eviction)
	// metrics are the node's /stats/summary and /metrics/* (packages
	// kubelet/stats and kubelet/metrics, wired in managers.go).
	metrics *kubeletmetrics.Endpoints
	clock   clock.WithTickerAndDelayedExecution
	log     *slog.Logger

	// runtimeManager turns the pods' specs into CRI calls: sandboxes,
	// stops, lifecycle hooks (package kuberuntime).
	runtimeManager *kuberuntime.Manager

	// terminating holds the pods whose containers are being stopped, each
	// by its own goroutine (termination.go), under its own lock.
	terminating stopping

	// volumes is the volume manager: it sets up and tears down the pods'
	// volumes, and remembers whose were set up and which Multi-Attach
	// errors it reported (package volumemanager, its own lock).
	volumes *volumemanager.Manager

	// static are the static pods of PodManifestPath and their mirrors
	// (package config, its own lock), which staticPods reads and syncs.
	static     config.StaticPods
	staticPods *config.Manager

	// probeClient is an HTTP client to a pod's IP, without keep-alives
	// (package prober's): httpGet probes, and kubelet/kuberuntime's
	// httpGet hooks.
	probeClient func(timeout time.Duration) *http.Client

	// podCertificateFiles adds the files of a pod's podCertificate
	// source to a projected volume (volumesources.go): the fleet's
	// package podcertificate, its requests going as this node.
	podCertificateFiles func(ctx context.Context, pod *corev1.Pod, volume string, index int, src *corev1.PodCertificateProjection,
		mode os.FileMode, out map[string]volumemanager.File) error
}

// New returns a kubelet for cfg, talking to the API server through c: a
// fleet of one node (fleet.go). It connects to the container runtime (or
// starts one in-process) and opens the kubelet API's port, and fails at
// once if either cannot be had. Run releases them when it returns.
func New(c *client.Client, cfg Config) (*Kubelet, error) {
	f, err := NewFleet(c, cfg, []string{cfg.NodeName})
	if err != nil {
		return nil, err
	}
	return f.byName[cfg.NodeName], nil
}

// Run runs the kubelet's fleet: see Fleet.Run.
func (k *Kubelet) Run(ctx context.Context) error { return k.fleet.Run(ctx) }

// withDefaults fills in what cfg leaves zero.
func withDefaults(cfg Config) (Config, error) {
	if cfg.Capacity == nil {
		capacity, err := Capacity("4", "8Gi", 110)
		if err != nil {
			return cfg, err
		}
		cfg.Capacity = capacity
	}
	if cfg.StatusInterval <= 0 {
		cfg.StatusInterval = 10 * time.Second
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 5
	}
	if cfg.BackOffInitial <= 0 {
		cfg.BackOffInitial = DefaultBackOffInitial
	}
	if cfg.BackOffMax <= 0 {
		cfg.BackOffMax = DefaultBackOffMax
	}
	if cfg.FileCheckFrequency <= 0 {
		cfg.FileCheckFrequency = DefaultFileCheckFrequency
	}
	if cfg.SyncFrequency <= 0 {
		cfg.SyncFrequency = DefaultSyncFrequency
	}
	if cfg.EvictionMonitoringPeriod <= 0 {
		cfg.EvictionMonitoringPeriod = DefaultEvictionMonitoringPeriod
	}
	// Absolute, as the runtime (maybe another process, elsewhere) and the
	// links an nfs volume makes (kubelet/volumemanager) need them.
	for _, dir := range []*string{&cfg.NodeRoot, &cfg.NFSRoot} {
		if *dir != "" {
			abs, err := filepath.Abs(*dir)
			if err != nil {
				return cfg, err
			}
			*dir = abs
		}
	}
	if cfg.ClusterDNS == nil {
		cfg.ClusterDNS = []netip.Addr{DefaultClusterDNS}
	}
	if cfg.ClusterDomain == "" {
		cfg.ClusterDomain = DefaultClusterDomain
	}
	if cfg.ResolverConfig == "" {
		cfg.ResolverConfig = DefaultResolverConfig
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.PodLogsDir == "" {
		cfg.PodLogsDir = DefaultPodLogsDir
	}
	return cfg, nil
}

// DefaultPodLogsDir is where the kubelet asks runtimes to write container
// logs, as Kubernetes' --pod-logs-dir: one directory per pod,
// <namespace>_<pod>_<uid>, with <container>/<attempt>.log in it.
const DefaultPodLogsDir = "/var/log/pods"

// newKubelet is one node's agent in fleet f.
func newKubelet(f *Fleet, cfg Config) *Kubelet {
	log := cfg.Log.With("node", cfg.NodeName)
	// Each node's own requests go as that node (identity.go).
	k := &Kubelet{cfg: cfg, fleet: f, client: asNode(f.client, cfg.NodeName), runtime: f.runtime, clock: cfg.Clock, log: log,
		recorder: f.recorder.WithHost(cfg.NodeName), informer: f.informer,
		queue:   workqueue.New[string](cfg.Clock),
		backOff: backoff.New(cfg.BackOffInitial, cfg.BackOffMax, cfg.Clock),
	}
	k.metrics = newMetricsEndpoints(k) // managers.go
	k.images = images.NewManager(f.runtime.images, backoff.New(cfg.BackOffInitial, cfg.BackOffMax, cfg.Clock), cfg.BackOffInitial,
		f.nodeImages.Changed, k.metrics.Kubelet.ObserveImagePull, k.recorder, cfg.Clock, log)
	k.admission = lifecycle.NewAdmitter(nodeSource{k}, cfg.AllowedUnsafeSysctls, log)
	k.lease = nodelease.NewController(k.client, cfg.NodeName, func() *corev1.Node { return k.nodeStatus.Node() }, cfg.Clock, log)
	// The runtime answered Version when the fleet connected.
	k.nodeStatus = newNodeStatusManager(k)
	k.status = status.NewManager(k.client, k.static.APIUID, cfg.Clock, log)
	k.volumes = newVolumeManager(k) // volumes.go: first, as the others find the node's disk through it
	k.runtimeManager = kuberuntime.NewManager(kuberuntime.Options{Runtime: f.runtime.runtime, Client: k.client,
		Recorder: k.recorder, Clock: cfg.Clock, Log: log, Configs: criConfigs(cfg.PodLogsDir), // managers.go
		ContainerID: f.runtime.containerID, NodeRoot: cfg.NodeRoot,
		OnDisk: k.volumes.OnDisk, PodDNS: k.dnsConfigurer().PodDNS, HostsMount: k.hostsMount, // dns.go, etchosts.go
		ProbePort: prober.Port, HTTPClient: func() *http.Client { return k.probeClient(0) }}) // package prober
	probes := &prober.Prober{Injected: f.runtime.probeFailure, Runtime: f.runtime.runtime, DialPod: f.runtime.dialPod, // podnetwork.go
		Kill: func(ctx context.Context, pod *corev1.Pod, spec corev1.Container, cur *kubecontainer.Container, grace *int64) error {
			return k.runtimeManager.KillContainer(ctx, pod, spec, cur, kuberuntime.GracePeriod(grace))
		},
		Resync: k.queue.Add, Recorder: k.recorder, Log: log}
	k.probes = prober.NewManager(prober.Options{Runner: k.metrics.Probes.Runner(probes, cfg.Clock), OnChange: probes.OnChange,
		OnFailedRun: probes.OnFailedRun, Clock: cfg.Clock, Log: log})
	k.probeClient = probes.HTTPClient
	k.env = &envvars.Builder{NodeIP: cfg.NodeIP.String(), Allocatable: cfg.Capacity,
		Services: func() []*corev1.Service {
			var services []*corev1.Service
			for _, obj := range f.services.Cache().List() {
				services = append(services, obj.(*corev1.Service))
			}
			return services
		},
		ConfigMap: k.configMap, Secret: k.secret, // objects.go
		PodField: podField, ResourceField: resourceField, // downwardapi.go
		Recorder: k.recorder, Retry: k.queue.AddAfter, Log: log}
	certNode := &podcertificate.ClientNode{Name: cfg.NodeName, UID: func() types.UID { return k.nodeStatus.Node().UID }, Client: k.client, Recorder: k.recorder}
	k.podCertificateFiles = func(ctx context.Context, pod *corev1.Pod, volume string, index int, src *corev1.PodCertificateProjection,
		mode os.FileMode, out map[string]volumemanager.File) error {
		return f.podCertificates.Files(ctx, certNode, pod, volume, index, src, mode, out)
	}
	k.eviction = newEvictionManager(k)
	k.staticPods = newStaticPodManager(k)
	return k
}

// register writes the node's files, then registers the node, writes its
// CSINode and creates its lease (package nodestatus).
func (k *Kubelet) register(ctx context.Context) error {
	if err := k.ensureNodeFiles(); err != nil { // etchosts.go
		return fmt.Errorf("node files: %w", err)
	}
	return k.nodeStatus.Register(ctx)
}

// run is the node's part of Run once its pods are listed: it takes back
// the pods of an earlier kubelet, reads its static pods, and syncs its
// pods with Workers workers until ctx ends.
func (k *Kubelet) run(ctx context.Context, wg *sync.WaitGroup) {
	k.restorePods(ctx)
	if k.cfg.PodManifestPath != "" {
		wg.Go(func() { k.staticPods.Run(ctx) })
	}
	k.log.Info("kubelet ready: watching the pods bound to this node", seedstep.Key, seedstep.KubeletStartsPod,
		"pods", len(k.fleet.podsOf(k.cfg.NodeName)), "podCIDR", k.cfg.PodCIDR.String(), "runtime", k.runtime.version)
	for range k.cfg.Workers {
		wg.Go(func() { k.queue.Work(ctx, k.metrics.Kubelet.TimeSync(k.syncPod), k.log, "pod") })
	}
	wg.Go(func() {
		<-ctx.Done()
		k.queue.ShutDown()
	})
}

// DefaultBackOffInitial and DefaultBackOffMax are Kubernetes' crash-loop
// and image-pull back-off delays (package backoff).
const (
	DefaultBackOffInitial = backoff.DefaultInitial
	DefaultBackOffMax     = backoff.DefaultMax
)

// DefaultFileCheckFrequency is the kubelet's --file-check-frequency
// (package config).
const DefaultFileCheckFrequency = config.DefaultFileCheckFrequency

// DefaultEvictionMonitoringPeriod is how often the eviction manager
// measures the pods' local storage (package eviction).
const DefaultEvictionMonitoringPeriod = eviction.DefaultMonitoringPeriod
