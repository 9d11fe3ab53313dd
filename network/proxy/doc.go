// Package proxy is mkube's kube-proxy: it turns a Service's ClusterIP,
// external IPs and NodePorts into its ready endpoints, the pods' IPs and
// target ports, as kube-proxy's iptables rules DNAT a connection
// (pkg/proxy/iptables/proxier.go): one endpoint picked at random, or the
// client's last one under ClientIP session affinity; a Service without
// ready endpoints refuses.
//
// It serves seed 003's Service chapter (九, "a Service gives a group of
// containers one entry address and spreads the requests over the
// containers behind it") and its readinessProbe section (十: a Pod that
// is not ready leaves its Service's endpoints, and gets no requests until
// it is ready again).
//
// Two programs use it, as kube-proxy and the kernel share the work. The
// kubelet plays kube-proxy: its Proxier watches the Services,
// EndpointSlices and Nodes and gives its runtime the rules (SetServices).
// The runtime (cri) plays the kernel's nat table: it keeps the rules in
// a Table, which the node's pod network asks where each of its
// containers' connections goes, before routing it (network/podnetwork's
// outbound.go, route).
//
// Where things live:
//
//	file          what it holds (the real component's part)
//	proxier.go    Proxier: the Services and EndpointSlices as rules, pushed to the runtime (kube-proxy's syncProxyRules)
//	rules.go      Rules and Table: the rules in force and Translate, ClusterIP or NodePort to an endpoint (iptables' nat table)
package proxy
