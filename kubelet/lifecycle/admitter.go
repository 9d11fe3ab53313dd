package lifecycle

import (
	"context"
	"log/slog"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// NodeSource is the kubelet's Node as admission judges pods against it.
type NodeSource interface {
	// Node is the node as last seen (the informer's copy, if any).
	Node(ctx context.Context) (*corev1.Node, error)
	// ReadNode reads it afresh from the API server.
	ReadNode(ctx context.Context) (*corev1.Node, error)
}

// Admitter is one node's admission and allocation: the pods let in,
// which hold the node's resources and ports, and the resizes that wait.
// Its methods are safe for concurrent use by the pod workers.
type Admitter struct {
	node          NodeSource
	allowedUnsafe []string // --allowed-unsafe-sysctls
	log           *slog.Logger

	// admitMu makes admissions and resizes one at a time: two pods
	// asking for the last port cannot both be let in.
	admitMu sync.Mutex

	mu       sync.Mutex                // guards what follows
	admitted map[types.UID]*corev1.Pod // the pods let in, with the resources allocated to them
	// pendingResizes are why the resizes that could not be allocated
	// wait (allocation.go).
	pendingResizes map[types.UID]*corev1.PodCondition
}

// NewAdmitter returns the admission of the node node gives, which allows
// the unsafe sysctls allowedUnsafe.
func NewAdmitter(node NodeSource, allowedUnsafe []string, log *slog.Logger) *Admitter {
	return &Admitter{node: node, allowedUnsafe: allowedUnsafe, log: log,
		admitted: map[types.UID]*corev1.Pod{}, pendingResizes: map[types.UID]*corev1.PodCondition{}}
}
