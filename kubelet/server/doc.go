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
// kubelet/metrics) it finds by the node the request names (stats.go).
//
// Every request is authenticated and authorized as a real kubelet's
// (auth.go): with the kubelet's defaults (--anonymous-auth=true,
// --authorization-mode=AlwaysAllow) anyone may do anything; as kubeadm
// configures it (anonymous off, --authentication-token-webhook,
// --authorization-mode=Webhook) a bearer token is checked with a
// TokenReview and the request with a SubjectAccessReview of nodes/stats,
// nodes/metrics, nodes/log, nodes/spec or nodes/proxy (package
// internal/delegatedauth asks, and caches the answers). A client
// certificate that --client-ca-file's CA signed authenticates too, as its
// CN in the groups of its O: the API server's
// --kubelet-client-certificate does (package apiserver/kubeletclient).
// The port is HTTPS, as a real kubelet's on 10250 (tls.go): the
// certificate of --tls-cert-file, else one it signs itself, kept in
// --cert-dir. Serve blocks until its context ends.
//
// Where things live:
//
//	file              what it holds
//	server.go         the Server, its Host, the routes, and GET /containerLogs
//	auth.go           Auth: authentication (client certificate, TokenReview, anonymous) and authorization (AlwaysAllow, Webhook)
//	containerlog.go   reading the CRI log files for `kubectl logs` (tail, follow, since, limit)
//	exec.go           exec, attach and port-forward: the runtime's streaming URLs, proxied
//	faults.go         mkube's fault injection for teaching (crash, oom, fail-probes, process, freeze)
//	stats.go          a node's /stats/summary and /metrics/*: which node a request is for
//	tls.go            the port's serving certificate: given, or self-signed and kept in --cert-dir
//	doc.go            this map
package server
