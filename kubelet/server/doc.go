// Package server is the kubelet's own HTTP API (pkg/kubelet/server,
// server.go there), on the port the node reports in
// node.status.daemonEndpoints: what `kubectl logs`, exec, attach and
// port-forward reach through the API server's nodes/proxy, once seed
// 000's steps 12 and 13 have the pod running. It is no step of the seed
// itself: it serves the pods the other packages made.
//
// One Server serves a process's nodes (a fleet): it finds a pod by its
// key, whatever its node, and reads or streams its containers through
// the runtime (its Host); a node's stats and metrics (package
// kubelet/metrics) it finds by the node the request names (stats.go). Real kubelets serve it over TLS with
// authentication; this one is plain HTTP, like the rest of mkube. Serve
// blocks until its context ends.
//
// Where things live:
//
//	file              what it holds
//	server.go         the Server, its Host, the routes, and GET /containerLogs
//	containerlog.go   reading the CRI log files for `kubectl logs` (tail, follow, since, limit)
//	exec.go           exec, attach and port-forward: the runtime's streaming URLs, proxied
//	faults.go         mkube's fault injection for teaching (crash, oom, fail-probes, process, freeze)
//	stats.go          a node's /stats/summary and /metrics/*: which node a request is for
//	doc.go            this map
package server
