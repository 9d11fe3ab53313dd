package proxy

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/network/tablesync"
	"github.com/mkube/mkube/proto/runtimev1"
)

// The service proxy: a Service's cluster IP is no pod's, and a real
// node's kube-proxy makes it work. It watches the Services and the
// EndpointSlices the EndpointSlice controller keeps for them, and writes
// the node's rules: a connection to CLUSTER-IP:PORT, to an external IP,
// or to any node's IP at a NodePort, goes to one of the port's ready
// endpoints. The kubelet plays kube-proxy here, with a Proxier, as it
// plays the pod network's daemon (network/podnetwork's peers.go): it
// gives its runtime the Services with their ready endpoints
// (SetServices) each time they change, and the runtime rewrites its
// containers' connections (rules.go). The same Services are the cluster
// DNS the runtime answers at --cluster-dns (network/dns), as CoreDNS
// answers from them. Reading every EndpointSlice is kube-proxy's ClusterRole,
// system:node-proxier, which mkube binds to system:nodes.

// Proxier keeps the runtime's Service rules in step with the Services,
// EndpointSlices and Nodes, as kube-proxy's Proxier syncs its rules
// (pkg/proxy/iptables/proxier.go, syncProxyRules). Run blocks.
type Proxier struct {
	loop                    *tablesync.Loop[*runtimev1.SetServicesRequest]
	services, slices, nodes *client.Informer
	ours                    func(node string) bool // the nodes whose pods the runtime runs
	clusterDNS              []string
	clusterDomain           string
	network                 runtimev1.PodNetworkClient
	log                     *slog.Logger
}

// NewProxier is the rules of the Services, EndpointSlices and Nodes in
// those informers, with the cluster DNS's addresses and domain, given to
// network (the runtime's PodNetwork).
func NewProxier(services, endpointSlices, nodes *client.Informer, ours func(string) bool, clusterDNS []netip.Addr, clusterDomain string, network runtimev1.PodNetworkClient, clk clock.Clock, log *slog.Logger) *Proxier {
	p := &Proxier{services: services, slices: endpointSlices, nodes: nodes, ours: ours, clusterDomain: clusterDomain, network: network, log: log}
	for _, ip := range clusterDNS {
		p.clusterDNS = append(p.clusterDNS, ip.String())
	}
	equal := func(a, b *runtimev1.SetServicesRequest) bool { return proto.Equal(a, b) }
	p.loop = tablesync.New("service proxy: rules", p.want, equal, p.push, clk, log)
	every := client.Handler{
		OnAdd:    func(runtime.Object) { p.loop.Changed() },
		OnUpdate: func(_, _ runtime.Object) { p.loop.Changed() },
		OnDelete: func(runtime.Object) { p.loop.Changed() },
	}
	services.AddHandler(every)
	endpointSlices.AddHandler(every)
	nodes.AddHandler(client.Handler{
		OnAdd: func(runtime.Object) { p.loop.Changed() },
		OnUpdate: func(old, obj runtime.Object) {
			// Heartbeats update every Node every 10 s: only its
			// addresses count, where NodePorts are open and where the
			// pod network reaches the node on the host's network.
			if !slices.Equal(nodeIPs(old.(*corev1.Node)), nodeIPs(obj.(*corev1.Node))) {
				p.loop.Changed()
			}
		},
		OnDelete: func(runtime.Object) { p.loop.Changed() },
	})
	return p
}

// Run keeps the rules until ctx ends.
func (p *Proxier) Run(ctx context.Context) {
	p.loop.Run(ctx, p.services, p.slices, p.nodes)
}

func (p *Proxier) push(ctx context.Context, req *runtimev1.SetServicesRequest) error {
	if _, err := p.network.SetServices(ctx, req); err != nil {
		return err
	}
	endpoints := 0
	for _, svc := range req.Services {
		endpoints += len(svc.Endpoints)
	}
	p.log.Info("service proxy: rules set", "services", len(req.Services), "endpoints", endpoints, "nodeIPs", len(req.NodeIps))
	return nil
}

// want is the rules the caches call for, sorted so that an unchanged
// cluster compares equal.
func (p *Proxier) want() *runtimev1.SetServicesRequest {
	req := &runtimev1.SetServicesRequest{ClusterDns: p.clusterDNS, ClusterDomain: p.clusterDomain}
	for _, obj := range p.nodes.Cache().List() {
		node := obj.(*corev1.Node)
		req.NodeIps = append(req.NodeIps, nodeIPs(node)...)
		if p.ours(node.Name) {
			req.LocalNodeIps = append(req.LocalNodeIps, nodeIPs(node)...)
		}
	}
	for _, ips := range []*[]string{&req.NodeIps, &req.LocalNodeIps} {
		slices.Sort(*ips)
		*ips = slices.Compact(*ips)
	}

	byService := map[string][]*discoveryv1.EndpointSlice{}
	for _, obj := range p.slices.Cache().List() {
		es := obj.(*discoveryv1.EndpointSlice)
		if name := es.Labels[discoveryv1.LabelServiceName]; name != "" && es.AddressType == discoveryv1.AddressTypeIPv4 {
			key := es.Namespace + "/" + name
			byService[key] = append(byService[key], es)
		}
	}
	for _, obj := range p.services.Cache().List() {
		svc := obj.(*corev1.Service)
		req.Services = append(req.Services, serviceRules(svc, byService[svc.Namespace+"/"+svc.Name]))
	}
	slices.SortFunc(req.Services, func(a, b *runtimev1.Service) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return req
}

// serviceRules is svc's rules, from its EndpointSlices.
func serviceRules(svc *corev1.Service, endpointSlices []*discoveryv1.EndpointSlice) *runtimev1.Service {
	out := &runtimev1.Service{Namespace: svc.Namespace, Name: svc.Name, ExternalIps: svc.Spec.ExternalIPs}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		out.ExternalName = svc.Spec.ExternalName
		return out
	}
	for _, ip := range svc.Spec.ClusterIPs {
		if ip != corev1.ClusterIPNone && ip != "" {
			out.ClusterIps = append(out.ClusterIps, ip)
		}
	}
	if svc.Spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		out.AffinityTimeoutSeconds = corev1.DefaultClientIPServiceAffinitySeconds
		if c := svc.Spec.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil {
			out.AffinityTimeoutSeconds = *c.ClientIP.TimeoutSeconds
		}
	}
	// Slices in a stable order, so the same endpoints compare equal.
	endpointSlices = slices.Clone(endpointSlices)
	slices.SortFunc(endpointSlices, func(a, b *discoveryv1.EndpointSlice) int { return strings.Compare(a.Name, b.Name) })
	for _, sp := range svc.Spec.Ports {
		port := &runtimev1.ServicePort{Name: sp.Name, Protocol: string(sp.Protocol), Port: sp.Port, NodePort: sp.NodePort}
		for _, es := range endpointSlices {
			target, ok := slicePort(es, sp)
			if !ok {
				continue
			}
			for _, ep := range es.Endpoints {
				if !serving(ep) {
					continue
				}
				for _, addr := range ep.Addresses {
					port.Backends = append(port.Backends, net.JoinHostPort(addr, strconv.Itoa(int(target))))
				}
			}
		}
		out.Ports = append(out.Ports, port)
	}
	// What DNS publishes: ready endpoints, not-ready ones too if the
	// Service says so (a StatefulSet's peers find each other so).
	seen := map[string]bool{}
	for _, es := range endpointSlices {
		for _, ep := range es.Endpoints {
			if !serving(ep) && !svc.Spec.PublishNotReadyAddresses {
				continue
			}
			for _, addr := range ep.Addresses {
				hostname := ""
				if ep.Hostname != nil {
					hostname = *ep.Hostname
				}
				if key := addr + "/" + hostname; !seen[key] {
					seen[key] = true
					out.Endpoints = append(out.Endpoints, &runtimev1.Endpoint{Ip: addr, Hostname: hostname})
				}
			}
		}
	}
	return out
}

// slicePort is the endpoints' port in es for the Service port sp: the
// slice's port of the same name and protocol.
func slicePort(es *discoveryv1.EndpointSlice, sp corev1.ServicePort) (int32, bool) {
	for _, p := range es.Ports {
		name, protocol := "", corev1.ProtocolTCP
		if p.Name != nil {
			name = *p.Name
		}
		if p.Protocol != nil {
			protocol = *p.Protocol
		}
		if name == sp.Name && protocol == sp.Protocol && p.Port != nil {
			return *p.Port, true
		}
	}
	return 0, false
}

// serving reports whether kube-proxy sends new connections to ep: it is
// ready (an unset condition means ready).
func serving(ep discoveryv1.Endpoint) bool {
	return ep.Conditions.Ready == nil || *ep.Conditions.Ready
}

// nodeIPs are node's addresses that are IPs (InternalIP, ExternalIP;
// not a Hostname or DNS name), as kube-proxy opens NodePorts on every
// address of its node.
func nodeIPs(node *corev1.Node) []string {
	var out []string
	for _, a := range node.Status.Addresses {
		if _, err := netip.ParseAddr(a.Address); err == nil {
			out = append(out, a.Address)
		}
	}
	return out
}
