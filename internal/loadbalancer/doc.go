// Package loadbalancer is the one address in front of several API
// servers: a TCP load balancer that stands in for what kind runs as its
// haproxy container and kubeadm asks for as the control-plane endpoint
// (and k3s builds into each agent, pkg/agent/loadbalancer). Kubelets,
// the scheduler, the controller manager and kubectl dial it as if it were
// one API server; it passes each connection, still TLS from end to end,
// to a server that answers /readyz.
//
// Why TCP and not HTTP: client-go takes one server URL, and the TLS
// session (the client's certificate is its identity) must end at the API
// server, so the balancer cannot read requests, only connections. A
// long-lived connection (a watch, HTTP/2 multiplexing many requests) stays
// on the server it was given; when that server fails its health check the
// balancer closes the connections it had there, so that clients reconnect
// at once through the balancer to a live one and resume their watches
// from their resourceVersion, as k3s's balancer does, instead of waiting
// for TCP to notice a dead peer.
//
// Health: every Interval, GET https://BACKEND/readyz (anonymous, as
// kube-apiserver lets anyone read it); mkube's /readyz reads etcd's
// revision with a linearizable read, so a server whose etcd member is cut
// off from the quorum is taken out too, not only a dead one.
//
//	file          what it holds
//	doc.go        this map
//	balancer.go   Balancer: Run (accept, pick a healthy backend round-robin, splice), the health checks
//	balancer_test.go  connections go to ready backends only; a failed one's are cut
package loadbalancer
