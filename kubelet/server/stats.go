package server

import (
	"fmt"
	"net/http"
	"strings"
)

// A node's stats and metrics: /stats/summary, /metrics,
// /metrics/resource, /metrics/cadvisor and /metrics/probes, each of one
// node only, as a real kubelet (one per host) serves them. A process may
// run many nodes on one port, so the node is chosen by, in order:
//
//   - the path: /nodes/NAME/metrics/resource, which the nodes of a fleet
//     name in their annotation metrics.k8s.io/resource-metrics-path for
//     metrics-server (0.7+), as KWOK's do;
//   - NodeHeader, which the API server's node proxy sets, so that
//     `kubectl get --raw /api/v1/nodes/NAME/proxy/metrics/resource`
//     reads NAME's;
//   - the process's only node.
//
// (The port is HTTPS like the rest of this API, tls.go; with
// --authorization-mode=Webhook a request is authorized as nodes/stats or
// nodes/metrics of the node chosen the same way: auth.go.)

// NodeHeader names the node a request through the API server's node
// proxy is for (mkube's own: a real kubelet is one node and ignores it).
const NodeHeader = "X-Mkube-Node-Name"

// serveNodeEndpoint serves path of the node the request names.
func (s *Server) serveNodeEndpoint(path string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		node := r.PathValue("node")
		if node == "" {
			node = r.Header.Get(NodeHeader)
		}
		if nodes := s.host.Nodes(); node == "" && len(nodes) == 1 {
			node = nodes[0]
		} else if node == "" {
			http.Error(w, fmt.Sprintf("this kubelet runs %d nodes (%s, ...): ask for /nodes/NAME%s, or through the API server's node proxy",
				len(nodes), nodes[0], path), http.StatusNotFound)
			return
		}
		h := s.host.NodeEndpoint(node, path)
		if h == nil {
			http.Error(w, fmt.Sprintf("node %q is not one of this kubelet's", node), http.StatusNotFound)
			return
		}
		h.ServeHTTP(w, r)
	}
}

// handleNodeEndpoints routes each of paths, plain and below /nodes/NAME.
func (s *Server) handleNodeEndpoints(mux *http.ServeMux, paths []string) {
	for _, path := range paths {
		mux.HandleFunc("GET "+path, s.serveNodeEndpoint(path))
		mux.HandleFunc("GET /nodes/{node}"+path, s.serveNodeEndpoint(path))
	}
}

// NodePath is path below a fleet node's own prefix: what its annotation
// metrics.k8s.io/resource-metrics-path names.
func NodePath(node, path string) string {
	return "/nodes/" + node + "/" + strings.TrimPrefix(path, "/")
}
