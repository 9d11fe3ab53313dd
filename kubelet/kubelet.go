package kubelet

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/internal/seedstep"
	"github.com/mkube/mkube/kubelet/backoff"
	"github.com/mkube/mkube/kubelet/config"
	"github.com/mkube/mkube/kubelet/images"
	"github.com/mkube/mkube/kubelet/kuberuntime"
	"github.com/mkube/mkube/kubelet/lifecycle"
	"github.com/mkube/mkube/kubelet/nodelease"
	"github.com/mkube/mkube/kubelet/nodestatus"
	"github.com/mkube/mkube/kubelet/prober"
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
	// (csinode.go), which the scheduler's NodeVolumeLimits counts against
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
	// where its pods' volumes are set up (volumes.go). "" sets up none.
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
	// may set here (--allowed-unsafe-sysctls; sysctls.go).
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
	// limits) and evicts those over their limits (eviction.go); 0 means
	// Kubernetes' 10 s.
	EvictionMonitoringPeriod time.Duration
	// Address and Port are where the kubelet serves its API (container
	// logs); Port 0 takes any free port (tests run many kubelets on one
	// host). The node status reports the port actually used.
	Address string
	Port    int
	// BackOffInitial and BackOffMax bound the crash-loop back-off
	// (backoff.go); 0 means Kubernetes' 10 s and 5 min.
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
	status    *status.Manager          // writes the pod statuses, keeps the failures the kubelet decided
	probes    *prober.Manager          // the containers' liveness, readiness and startup probes (probes.go)
	clock     clock.WithTickerAndDelayedExecution
	log       *slog.Logger

	// runtimeManager turns the pods' specs into CRI calls: sandboxes,
	// stops, lifecycle hooks (package kuberuntime).
	runtimeManager *kuberuntime.Manager

	// terminating holds the pods whose containers are being stopped, each
	// by its own goroutine (termination.go), under its own lock.
	terminating stopping

	// volumes is the volume manager's memory: pods whose volumes were set
	// up, Multi-Attach errors reported (package volumemanager, its own lock).
	volumes volumemanager.State

	// nodeState is what the node status heartbeat remembers between beats
	// (package nodestatus, its own lock).
	nodeState *nodestatus.State

	// static are the static pods of PodManifestPath and their mirrors
	// (staticpods.go; package config, its own lock).
	static config.StaticPods

	// node names the registered Node (kind, name, uid) for events and as
	// the lease's owner. registerNode sets it before any goroutine that
	// reads it starts.
	node *corev1.Node
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
	// links an nfs volume makes (volumes.go) need them.
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
		// The runtime answered Version when the fleet connected.
		nodeState: nodestatus.NewState(cfg.Clock, cfg.NodeStatusReportFrequency),
	}
	k.images = images.NewManager(f.runtime.images, backoff.New(cfg.BackOffInitial, cfg.BackOffMax, cfg.Clock), cfg.BackOffInitial,
		f.imagesChanged, k.recorder, cfg.Clock, log)
	k.admission = lifecycle.NewAdmitter(nodeSource{k}, cfg.AllowedUnsafeSysctls, log)
	k.lease = nodelease.NewController(k.client, cfg.NodeName, func() *corev1.Node { return k.node }, cfg.Clock, log)
	k.status = status.NewManager(k.client, k.static.APIUID, cfg.Clock, log)
	k.runtimeManager = kuberuntime.NewManager(kuberuntime.Options{Runtime: f.runtime.runtime, Client: k.client,
		Recorder: k.recorder, Clock: cfg.Clock, Log: log, Configs: criConfigs(cfg.PodLogsDir), // runtimemanager.go
		ContainerID: f.runtime.containerID, NodeRoot: cfg.NodeRoot,
		OnDisk: k.onDisk, PodDNS: k.podDNS, HostsMount: k.hostsMount, // volumes.go, dns.go, etchosts.go
		ProbePort: probePort, HTTPClient: func() *http.Client { return k.probeClient(0) }}) // probes.go
	k.probes = prober.NewManager(prober.Options{Runner: probeRunner{k}, OnChange: k.onProbeChange,
		OnFailedRun: k.onProbeRunFailed, Clock: cfg.Clock, Log: log})
	return k
}

// register registers the node, writes its CSINode and creates its lease.
func (k *Kubelet) register(ctx context.Context) error {
	if err := k.ensureNodeFiles(); err != nil { // etchosts.go
		return fmt.Errorf("node files: %w", err)
	}
	if err := k.registerNode(ctx); err != nil {
		return err
	}
	// The CSINode is owned by the Node, so it comes once the Node has its
	// uid. Without it the node limits no volumes: the node still runs.
	if err := k.syncCSINode(ctx); err != nil && ctx.Err() == nil {
		k.log.Warn("CSINode not written: the node's volumes are not limited", "err", err)
	}
	// Registration wrote the node status; the lease comes at once too, not
	// after the first StatusInterval.
	if err := k.lease.Renew(ctx); err != nil && ctx.Err() == nil {
		k.log.Warn("node lease creation failed", "err", err)
	}
	return nil
}

// run is the node's part of Run once its pods are listed: it takes back
// the pods of an earlier kubelet, reads its static pods, and syncs its
// pods with Workers workers until ctx ends.
func (k *Kubelet) run(ctx context.Context, wg *sync.WaitGroup) {
	k.restorePods(ctx)
	if k.cfg.PodManifestPath != "" {
		wg.Go(func() { k.runStaticPods(ctx) })
	}
	k.log.Info("kubelet ready: watching the pods bound to this node", seedstep.Key, seedstep.KubeletStartsPod,
		"pods", len(k.fleet.podsOf(k.cfg.NodeName)), "podCIDR", k.cfg.PodCIDR.String(), "runtime", k.runtime.version)
	for range k.cfg.Workers {
		wg.Go(func() { k.queue.Work(ctx, k.syncPod, k.log, "pod") })
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
