// Package fakekubelet is a stand-in for a node's kubelet in tests of what
// reads kubelets (the metrics server, seed 003 §十三): an HTTP server that
// serves /metrics/resource (or another path) in the Prometheus text format
// a real kubelet writes, with the readings a test sets, and /portForward,
// which the API server's aggregator uses to reach a pod on the node: each
// forwarded connection goes to an address the test names, so that a
// server running in the test process stands in for the pod.
//
//	file            what it holds
//	fakekubelet.go  Kubelet: Start, StartTLS, Set (the readings), the resource metrics handler
//	portforward.go  the /portForward handler (SPDY/3.1, portforward.k8s.io) to the test's address
//	doc.go          this map
package fakekubelet
