package kubelet

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/cri"
	"github.com/mkube/mkube/internal/delegatedauth"
	"github.com/mkube/mkube/kubelet/clustertrustbundle"
	"github.com/mkube/mkube/kubelet/eviction"
	"github.com/mkube/mkube/kubelet/kuberuntime"
	kubeletmetrics "github.com/mkube/mkube/kubelet/metrics"
	"github.com/mkube/mkube/kubelet/nodestatus"
	"github.com/mkube/mkube/kubelet/pleg"
	"github.com/mkube/mkube/kubelet/podcertificate"
	"github.com/mkube/mkube/kubelet/server"
	"github.com/mkube/mkube/kubelet/token"
	"github.com/mkube/mkube/network/podnetwork"
	"github.com/mkube/mkube/network/proxy"
)

// A fleet is the kubelets of one process. A kubelet process is usually one
// node; `kubelet --nodes N` makes it N (as KWOK does), for scale tests: a
// 5,000-node cluster on one machine. Its nodes share what a node would
// otherwise have alone:
//
//   - one API connection and one pod informer, which list-watches the pods
//     bound to any node and hands each to its node's queue; on the secure
//     port, one identity, under which each node's own requests go
//     impersonated as that node (identity.go);
//   - one Services informer, for the service variables of every
//     container (package envvars), and one of its nodes, which admission
//     checks pods against (admission.go);
//   - one watch of the ClusterTrustBundles and one of its nodes'
//     PodCertificateRequests, for projected volumes
//     (packages clustertrustbundle and podcertificate);
//   - one container runtime, whose sandboxes carry their node's name
//     (kubelet/kuberuntime's LabelNodeName), and one container-event
//     stream (package pleg);
//   - one kubelet API port, which every node reports: a pod's logs are
//     found by the pod, whatever its node.
//
// Each node keeps its own Node, Lease, heartbeats, pod queue, workers,
// back-offs and static pods.

// Fleet is the kubelets of one process.
type Fleet struct {
	// cfg is the nodes' common configuration, defaults filled in; log
	// and clock are the fleet's own, for what is no one node's.
	cfg     Config
	names   []string // its nodes, in order
	log     *slog.Logger
	clock   clock.WithTickerAndDelayedExecution
	client  *client.Client
	runtime *runtimeService
	// runtimeOps count the CRI calls of every node, and processMetrics
	// are Go's and the process's: one of each for all nodes' /metrics
	// (kubelet/metrics).
	runtimeOps     *kubeletmetrics.RuntimeOperations
	processMetrics []prometheus.Collector
	informer       *client.Informer
	services       *client.Informer // every Service, for containers' env (package envvars)
	nodes          *client.Informer // the fleet's nodes as users left them, for admission (admission.go)
	// routes keeps the runtime's routes to the other nodes' pods, from
	// the Nodes: f.nodes for a fleet, peerNodes (all of them) for a
	// single kubelet (network/podnetwork). nil: the runtime has no
	// peer address.
	routes    *podnetwork.RouteSync
	peerNodes *client.Informer
	// proxy keeps the runtime's Service rules and cluster DNS, from the
	// Services, every EndpointSlice and the Nodes (network/proxy).
	proxy          *proxy.Proxier
	endpointSlices *client.Informer
	// configMaps and secrets are every ConfigMap and Secret, for
	// containers' env and volumes (objects.go); nil for a kubelet whose
	// identity may not list them, which reads each (identity.go).
	configMaps, secrets *client.Informer
	// changedMu guards changed: the ConfigMaps and Secrets changed since
	// the last volume resync, "configmap/ns/name" (volumes.go).
	changedMu sync.Mutex
	changed   map[string]bool
	tokens    *token.Manager   // the pods' service-account tokens (package token)
	recorder  *record.Recorder // its Run sends every node's events
	listener  net.Listener     // the kubelet API's, opened by NewFleet
	serving   *tls.Config      // the kubelet API's TLS (server/tls.go)
	kubelets  []*Kubelet
	byName    map[string]*Kubelet // read-only once NewFleet returns

	// trustBundles and podCertificates make clusterTrustBundle and
	// podCertificate projected sources (packages clustertrustbundle and
	// podcertificate), the latter from certificateRequests, the
	// PodCertificateRequests naming the fleet's nodes.
	trustBundles        *clustertrustbundle.Manager
	podCertificates     *podcertificate.Manager
	certificateRequests *client.Informer

	// nodeImages are the runtime's images, which every node's status
	// lists: asked for once for all (package nodestatus).
	nodeImages *nodestatus.Images
}

// FleetPodCIDR is where the nodes of a fleet of more than one get their
// pod CIDRs, a /24 each: 32,768 nodes, and the runtime they share hands
// out pod IPs from all of it.
var FleetPodCIDR = netip.MustParsePrefix("10.128.0.0/9")

// NodeNames are the nodes of `--node-name prefix --nodes n`: prefix-1 …
// prefix-n, zero-padded to the same width so that they sort
// ("fake-0001" … "fake-5000"). One node is just prefix.
func NodeNames(prefix string, n int) []string {
	if n <= 1 {
		return []string{prefix}
	}
	width := len(strconv.Itoa(n))
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%0*d", prefix, width, i+1)
	}
	return names
}

// NewFleet returns kubelets for the nodes names, each configured by base
// but for its name and, with more than one node, its pod CIDR (from
// FleetPodCIDR) and node IP (10.240.0.0/12 by index, unless base gives
// one for all). It connects to the runtime and opens the kubelet API's
// port, failing at once if either cannot be had.
func NewFleet(c *client.Client, base Config, names []string) (*Fleet, error) {
	if len(names) == 0 || names[0] == "" {
		return nil, fmt.Errorf("node name is required")
	}
	if err := checkIdentity(c, names); err != nil {
		return nil, err
	}
	base, err := withDefaults(base)
	if err != nil {
		return nil, err
	}
	cfgs := make([]Config, len(names))
	for i, name := range names {
		cfg := base
		cfg.NodeName = name
		switch {
		case len(names) > 1:
			cfg.PodCIDR = fleetPodCIDR(i)
			if !base.NodeIP.IsValid() {
				cfg.NodeIP = fleetNodeIP(i)
			}
		case !cfg.PodCIDR.IsValid():
			cfg.PodCIDR = DefaultPodCIDR(name)
		}
		if !cfg.NodeIP.IsValid() {
			cfg.NodeIP = DefaultNodeIP(name)
		}
		cfgs[i] = cfg
	}
	runtimeCIDR := cfgs[0].PodCIDR
	if len(names) > 1 {
		runtimeCIDR = FleetPodCIDR
	}
	log := base.Log
	if len(names) == 1 {
		log = log.With("node", names[0])
	}
	runtimeOps := kubeletmetrics.NewRuntimeOperations(base.Clock)
	rt, err := connectRuntime(context.Background(), base.RuntimeEndpoint, cri.Options{PodCIDR: runtimeCIDR,
		ImagePullDelay: base.ImagePullDelay, Clock: base.Clock, Log: log.With("component", "runtime"), NodeRoot: base.NodeRoot},
		grpc.WithUnaryInterceptor(runtimeOps.Interceptor()))
	if err != nil {
		return nil, err
	}
	// The kubelet's port, at once too: a kubelet that cannot serve its API
	// exits saying why instead of registering a node nobody can reach.
	serving, err := base.Serving.TLSConfig(names[0], []net.IP{cfgs[0].NodeIP.AsSlice()}, base.Clock.Now())
	if err != nil {
		rt.close()
		return nil, fmt.Errorf("kubelet API's serving certificate: %w", err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(base.Address, strconv.Itoa(base.Port)))
	if err != nil {
		rt.close()
		return nil, fmt.Errorf("kubelet API: %w", err)
	}
	// Step 12: the kubelet list-watches only the pods bound to its node
	// (a fleet: to any node, and keeps those of its own).
	selector, nodeSelector := "spec.nodeName="+names[0], "metadata.name="+names[0]
	if len(names) > 1 {
		selector, nodeSelector = "spec.nodeName!=", ""
	}
	f := &Fleet{cfg: base, names: names, log: log, clock: base.Clock, client: c, runtime: rt, runtimeOps: runtimeOps, processMetrics: kubeletmetrics.ProcessCollectors(), listener: ln, serving: serving, byName: map[string]*Kubelet{},
		recorder: record.New(c, "kubelet", names[0], log).Limit(eventQPS, eventBurst),
		informer: client.NewInformer(c, client.Pods, "", client.ListOptions{FieldSelector: selector}, log),
		// The kubelet's service lister: all namespaces, since a pod also
		// sees default/kubernetes.
		services:   client.NewInformer(c, client.Services, "", client.ListOptions{}, log),
		nodes:      client.NewInformer(c, client.Nodes, "", client.ListOptions{FieldSelector: nodeSelector}, log),
		nodeImages: nodestatus.NewImages(rt.images, base.Clock),
		changed:    map[string]bool{}, tokens: token.NewManager(c, base.Clock, log), trustBundles: clustertrustbundle.NewManager(c, log)}
	// The PodCertificateRequests of its nodes, as its pods (package podcertificate).
	f.podCertificates, f.certificateRequests = podcertificate.Watch(c, selector, f.informer, f.route, base.Clock, log)
	if !readsEachObject(c) { // a node's own certificate may not list them (identity.go)
		f.configMaps = client.NewInformer(c, client.ConfigMaps, "", client.ListOptions{}, log)
		f.secrets = client.NewInformer(c, client.Secrets, "", client.ListOptions{}, log)
	}
	f.watchObjects()
	// Every Node, for the routes to their pods and their NodePorts: a
	// fleet's f.nodes are all of them, a single kubelet's its own only.
	allNodes := f.nodes
	if len(names) == 1 {
		f.peerNodes = client.NewInformer(c, client.Nodes, "", client.ListOptions{}, log)
		allNodes = f.peerNodes
	}
	ours := func(node string) bool { return f.byName[node] != nil }
	if rt.peerAddress != "" { // the other nodes' pods are reachable (network/podnetwork)
		f.routes = podnetwork.NewRouteSync(allNodes, ours, rt.network, rt.peerAddress, base.Clock, log)
	}
	f.endpointSlices = client.NewInformer(c, client.EndpointSlices, "", client.ListOptions{}, log)
	f.proxy = proxy.NewProxier(f.services, f.endpointSlices, allNodes, ours, base.ClusterDNS, base.ClusterDomain, rt.network, base.Clock, log)
	for _, cfg := range cfgs {
		cfg.Port = ln.Addr().(*net.TCPAddr).Port
		k := newKubelet(f, cfg)
		f.kubelets = append(f.kubelets, k)
		f.byName[cfg.NodeName] = k
	}
	if c.Identity().User != "" {
		f.tokens.SetRequester(f.requestTokenAsNode)
	}
	f.informer.AddHandler(client.Handler{
		OnAdd:    f.route,
		OnUpdate: func(_, obj runtime.Object) { f.route(obj) },
		OnDelete: f.route, // the sync finds it gone and forgets it
	})
	return f, nil
}

// fleetPodCIDR is node i's /24 in FleetPodCIDR.
func fleetPodCIDR(i int) netip.Prefix {
	a := FleetPodCIDR.Addr().As4()
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 + uint32(i)<<8
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), 0}), 24)
}

// fleetNodeIP is node i's InternalIP: 10.240.0.0/12 counted from 10.240.0.1.
func fleetNodeIP(i int) netip.Addr {
	n := uint32(10)<<24 | uint32(240)<<16 + uint32(i) + 1
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

// route hands a pod event to the queue of the pod's node, if it is one
// of the fleet's: it only queues the pod's key.
func (f *Fleet) route(obj runtime.Object) {
	if k := f.byName[obj.(*corev1.Pod).Spec.NodeName]; k != nil {
		k.queue.Add(client.KeyOf(obj))
	}
}

// kubeletOf is the node that runs the pod named key: the one it is bound
// to, else the one whose sandbox the runtime labelled (a static pod
// before its mirror exists), else nil.
func (f *Fleet) kubeletOf(key string, sandboxLabels map[string]string) *Kubelet {
	if obj, ok := f.informer.Cache().Get(key); ok {
		return f.byName[obj.(*corev1.Pod).Spec.NodeName]
	}
	return f.byName[sandboxLabels[kuberuntime.LabelNodeName]]
}

// pods are all the fleet's pods.
func (f *Fleet) pods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, obj := range f.informer.Cache().List() {
		out = append(out, obj.(*corev1.Pod))
	}
	return out
}

// evictionManagerOf is the eviction manager of node, if it is one of the
// fleet's.
func (f *Fleet) evictionManagerOf(node string) *eviction.Manager {
	if k := f.byName[node]; k != nil {
		return k.eviction
	}
	return nil
}

// podsOf are the fleet's pods bound to node.
func (f *Fleet) podsOf(node string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, obj := range f.informer.Cache().List() {
		if pod := obj.(*corev1.Pod); pod.Spec.NodeName == node {
			out = append(out, pod)
		}
	}
	return out
}

// eventQPS and eventBurst are the kubelet's --event-qps and --event-burst
// defaults: how many events a second it sends, whatever its node count.
const (
	eventQPS   = 50
	eventBurst = 100
)

// registerConcurrency bounds the registrations in flight: 5,000 nodes
// register in seconds without a burst of thousands of requests.
const registerConcurrency = 16

// Run registers the fleet's nodes, then keeps their status and leases
// fresh and syncs their pods until ctx is cancelled. It returns an error
// only if ctx ended before the nodes could be registered.
//
// Goroutines, all stopped by ctx: the event recorder, the kubelet API
// server, the pod and Services informers, the container-event watch
// (package pleg), the eviction manager (package eviction) and, per node, the
// heartbeat loop, the static pods' reader and Workers pod workers
// (stopped by shutting down the node's queue once ctx ends). Run returns
// after all of them have.
func (f *Fleet) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer f.runtime.close() // after every goroutine that calls it is done
	defer wg.Wait()
	wg.Go(func() { f.recorder.Run(ctx) })
	srv := server.New(serverHost{f}, f.names[0], f.clock, f.log)
	srv.UseTLS(f.serving)
	if a := f.cfg.Auth; a != nil {
		auth := *a
		if auth.Reviewer == nil {
			auth.Reviewer = delegatedauth.New(f.client, f.clock, delegatedauth.KubeletTTLs)
		}
		srv.UseAuth(auth)
	}
	// The control plane's route to the pod network (podnetwork_route.go).
	srv.HandleFunc(podNetworkRoute+"{scheme}/{ip}/{port}/{path...}", f.servePodNetwork)
	wg.Go(func() { srv.Serve(ctx, f.listener) })
	if err := f.register(ctx); err != nil {
		return err
	}
	for i, k := range f.kubelets {
		offset := k.cfg.StatusInterval * time.Duration(i) / time.Duration(len(f.kubelets))
		wg.Go(func() { k.nodeStatus.Run(ctx, offset) })
	}
	informers := []*client.Informer{f.informer, f.services, f.nodes, f.trustBundles.Informer, f.certificateRequests}
	if f.configMaps != nil {
		informers = append(informers, f.configMaps, f.secrets)
	}
	for _, inf := range informers {
		wg.Go(func() { inf.Run(ctx) })
	}
	// The Services too before any container starts, as the kubelet waits
	// for its service lister: else a pod taken at startup could miss
	// KUBERNETES_SERVICE_HOST, which in-cluster clients need.
	if !client.WaitForSync(ctx, informers...) {
		return nil
	}
	// The informers a node's identity may lack a binding for run apart:
	// routes and Service rules wait for them by themselves.
	for _, inf := range []*client.Informer{f.peerNodes, f.endpointSlices} {
		if inf != nil {
			wg.Go(func() { inf.Run(ctx) })
		}
	}
	if f.routes != nil {
		wg.Go(func() { f.routes.Run(ctx) })
	}
	wg.Go(func() { f.proxy.Run(ctx) })
	wg.Go(func() { pleg.New(f.runtime.runtime, fleetEvents{f}, f.clock, f.log).Run(ctx) })
	wg.Go(func() { f.resyncVolumes(ctx) })
	wg.Go(func() { eviction.Run(ctx, f.clock, f.cfg.EvictionMonitoringPeriod, f.pods, f.evictionManagerOf) })
	for _, k := range f.kubelets {
		k.run(ctx, &wg)
	}
	<-ctx.Done()
	return nil
}

// register registers every node, registerConcurrency at a time.
func (f *Fleet) register(ctx context.Context) error {
	sem := make(chan struct{}, registerConcurrency)
	errs := make([]error, len(f.kubelets))
	var wg sync.WaitGroup
	for i, k := range f.kubelets {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = k.register(ctx)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if len(f.kubelets) > 1 {
		f.log.Info("registered the fleet's nodes", "nodes", len(f.kubelets),
			"first", f.names[0], "last", f.names[len(f.names)-1])
	}
	return nil
}
