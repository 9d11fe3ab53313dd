package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// nodesHost is a process's nodes, each answering its name and path.
type nodesHost struct {
	Host  // the rest is not called
	nodes []string
}

func (h nodesHost) Nodes() []string { return h.nodes }

func (h nodesHost) NodeEndpoint(node, path string) http.Handler {
	for _, n := range h.nodes {
		if n == node {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, node+" "+path) })
		}
	}
	return nil
}

func TestNodeEndpointChoosesTheNode(t *testing.T) {
	tests := []struct {
		name     string
		nodes    []string
		target   string
		header   string
		wantCode int
		wantBody string
	}{
		{"the only node", []string{"node01"}, "/metrics/resource", "", 200, "node01 /metrics/resource"},
		{"a fleet's node by path", []string{"fake-1", "fake-2"}, "/nodes/fake-2/stats/summary", "", 200, "fake-2 /stats/summary"},
		{"a fleet's node by the node proxy's header", []string{"fake-1", "fake-2"}, "/metrics/cadvisor", "fake-1", 200, "fake-1 /metrics/cadvisor"},
		{"a fleet without a node", []string{"fake-1", "fake-2"}, "/metrics", "", 404, "this kubelet runs 2 nodes (fake-1, ...): ask for /nodes/NAME/metrics"},
		{"another kubelet's node", []string{"fake-1", "fake-2"}, "/nodes/other/metrics/probes", "", 404, `node "other" is not one of this kubelet's`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(nodesHost{nodes: tt.nodes}, tt.nodes[0], clocktesting.NewFakeClock(time.Time{}), slog.New(slog.DiscardHandler))
			mux := http.NewServeMux()
			s.handleNodeEndpoints(mux, []string{"/stats/summary", "/metrics", "/metrics/resource", "/metrics/cadvisor", "/metrics/probes"})
			req := httptest.NewRequest("GET", tt.target, nil)
			if tt.header != "" {
				req.Header.Set(NodeHeader, tt.header)
			}
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, req)
			if w.Code != tt.wantCode || !strings.HasPrefix(w.Body.String(), tt.wantBody) {
				t.Errorf("%s: %d %q, want %d %q", tt.target, w.Code, w.Body, tt.wantCode, tt.wantBody)
			}
		})
	}
	if got := NodePath("fake-1", "/metrics/resource"); got != "/nodes/fake-1/metrics/resource" {
		t.Errorf("NodePath = %s", got)
	}
}
