// Package dns is mkube's cluster DNS: it stands in for CoreDNS (its
// kubernetes plugin, by Kubernetes' DNS specification) and for the
// kubelet's DNS configurer (pkg/kubelet/network/dns), the two ends of a
// pod's name lookups.
//
// It serves the pods of seed 000's walkthrough, whose YAML says
// dnsPolicy: ClusterFirst, and seed 003's Service chapter (九): a pod
// finds a Service by its name, web or web.default.svc.cluster.local,
// which answers with the Service's ClusterIP (network/proxy takes it from
// there).
//
// A name's way: the kubelet decides what the pod's /etc/resolv.conf says
// (Configurer: the cluster DNS's address, 10.96.0.10, the search path of
// the pod's namespace, ndots:5) and hands it to the runtime with the
// sandbox; the runtime writes the file into each container
// (cri/dns.go: that is containerd's part, so it stays in the runtime);
// a container's program asks through its resolver (PodResolver, the C
// library's search list and ndots), and the node's Server answers from
// the Zone its kubelet's Services made (the kubelet passes them with
// kube-proxy's rules, SetServices), in the runtime, as NodeLocal
// DNSCache answers at a node-local address.
//
// Where things live:
//
//	file            what it holds (the real component's part)
//	configurer.go   Configurer: a pod's resolv.conf from its dnsPolicy and dnsConfig (the kubelet's GetPodDNS)
//	resolver.go     Server, the node's cluster DNS, and PodResolver: a query through the search list (the C library's resolver)
//	zone.go         Zone: the records of the Services, and answering a name with them (CoreDNS's kubernetes plugin)
package dns
