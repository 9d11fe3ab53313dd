package kubelet

import (
	"context"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	kubecontainer "github.com/mkube/mkube/kubelet/container"
	"github.com/mkube/mkube/proto/runtimev1"
)

// serverHost is the fleet's side of the kubelet API (package server):
// its pods and its runtime.
type serverHost struct{ f *Fleet }

func (h serverHost) Pod(key string) (*corev1.Pod, bool) {
	obj, ok := h.f.informer.Cache().Get(key)
	if !ok {
		return nil, false
	}
	return obj.(*corev1.Pod), true
}

func (h serverHost) PodSandbox(ctx context.Context, uid types.UID) (*kubecontainer.PodSandbox, error) {
	return h.f.runtime.podSandbox(ctx, uid)
}

func (h serverHost) Runtime() runtimeapi.RuntimeServiceClient { return h.f.runtime.runtime }
func (h serverHost) Faults() runtimev1.FaultsClient           { return h.f.runtime.faults }

func (h serverHost) Nodes() []string { return h.f.names }

// NodeEndpoint is the node's stats or metrics handler (kubelet/metrics).
func (h serverHost) NodeEndpoint(node, path string) http.Handler {
	k := h.f.byName[node]
	if k == nil {
		return nil
	}
	return k.metrics.Handler(path)
}

func (h serverHost) FailProbes(ctx context.Context, id string, count int32) error {
	return h.f.runtime.failProbes(ctx, id, count)
}
