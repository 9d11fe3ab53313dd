package nodestatus

import (
	"context"
	"log/slog"
	"net/netip"
	"time"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
)

// Config is the node a kubelet says it is: the part of the kubelet's
// Config that registration and the node status are made of.
type Config struct {
	NodeName string
	NodeIP   netip.Addr
	PodCIDR  netip.Prefix
	Capacity corev1.ResourceList // allocatable too: a fake node reserves nothing
	Labels   map[string]string   // added to the well-known node labels
	Taints   []corev1.Taint      // set when the node registers
	// MaxVolumes is the allocatable.count of mkube's driver in the
	// node's CSINode (csinode.go); 0 is no limit.
	MaxVolumes int32
	Port       int // the kubelet API's, in status.daemonEndpoints
	// StatusInterval is how often the node status and lease are renewed;
	// NodeStatusReportFrequency, if set, writes the status only when it
	// is that old or changed.
	StatusInterval            time.Duration
	NodeStatusReportFrequency time.Duration
}

// Runtime is what a heartbeat asks the container runtime (CRI): its
// containers' stats (their memory), or only whether it answers.
type Runtime interface {
	ListContainerStats(ctx context.Context, in *runtimeapi.ListContainerStatsRequest, opts ...grpc.CallOption) (*runtimeapi.ListContainerStatsResponse, error)
	Status(ctx context.Context, in *runtimeapi.StatusRequest, opts ...grpc.CallOption) (*runtimeapi.StatusResponse, error)
}

// Lease is the node's Lease, the cheap heartbeat (package nodelease).
type Lease interface {
	Renew(ctx context.Context) error
}

// Options are what a node's Manager is given by its kubelet.
type Options struct {
	Config
	// Client is the node's own (a fleet's impersonates it, which the
	// Node authorizer lets write its Node and CSINode only).
	Client   *client.Client
	Recorder *record.Recorder
	Runtime  Runtime
	// RuntimeVersion is "<runtime_name>://<runtime_version>" from CRI
	// Version; PeerAddress the runtime's pod network address, annotated
	// on the Node (network/podnetwork).
	RuntimeVersion, PeerAddress string
	// Annotations are set on the Node when it registers, and again when
	// a restarted kubelet finds it (a fleet node's
	// metrics.k8s.io/resource-metrics-path).
	Annotations map[string]string
	// NodeContainers is the label selector of the node's containers.
	NodeContainers map[string]string
	// Images are the runtime's images as node.status.images lists them
	// (a fleet's Images, shared); RestoreImages puts back those a Node
	// registered before reported, into a runtime that lost them.
	Images        func(ctx context.Context) ([]corev1.ContainerImage, error)
	RestoreImages func([]corev1.ContainerImage)
	Lease         Lease
	Clock         clock.WithTicker
	Log           *slog.Logger
}

// Manager registers a node and keeps its status fresh: the kubelet's
// node status part (upstream kubelet_node_status.go).
type Manager struct {
	o     Options
	state *State
	// node names the registered Node (kind, name, uid) for events and as
	// the owner of the lease, CSINode and mirror pods. Register sets it
	// before any goroutine that reads it starts.
	node *corev1.Node
}

// NewManager returns the node status manager of a node whose runtime
// answered just now (when its kubelet connected).
func NewManager(o Options) *Manager {
	return &Manager{o: o, state: NewState(o.Clock, o.NodeStatusReportFrequency)}
}

// Node is the registered Node's kind, name and uid; nil before Register.
func (m *Manager) Node() *corev1.Node { return m.node }

// ContainersChanged makes the next heartbeat read the container stats:
// one of the node's containers started or stopped.
func (m *Manager) ContainersChanged() { m.state.ContainersChanged() }
