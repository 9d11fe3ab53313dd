// Package tablesync is the loop a node's network daemons share: flannel's
// daemon, which keeps the kernel's routes in step with the Nodes, and
// kube-proxy, which keeps its rules in step with the Services and
// EndpointSlices (its syncProxyRules, run after each change). mkube's
// kubelet runs both (network/podnetwork's RouteSync, network/proxy's
// Proxier), each pushing its table to the runtime; a Loop is what they
// have in common: list, compute what the caches call for, push it if it
// changed, retry what the runtime refused.
//
// Where things live:
//
//	file      what it holds
//	loop.go   Loop: Changed (from the informers' handlers) and Run (the owner goroutine)
package tablesync
