package kuberuntime

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
)

// Manager is a node's container runtime manager (kuberuntime's
// kubeGenericRuntimeManager): it turns what a pod's spec asks for into
// CRI calls, creating its sandbox, stopping its containers and running
// their lifecycle hooks. It keeps no state: what the runtime has is read
// back by labels (PodReader).
type Manager struct {
	Options
}

// Options are what the manager needs of the kubelet. The functions are
// the kubelet's own, which other files of package kubelet hold.
type Options struct {
	// Runtime is the CRI runtime service of the node.
	Runtime runtimeapi.RuntimeServiceClient
	// Client reads RuntimeClasses, as the node.
	Client Getter
	// Recorder records the pods' events (FailedCreatePodSandBox, the
	// failed hooks').
	Recorder Recorder
	Clock    clock.Clock
	Log      *slog.Logger
	// Configs builds the CRI configs of sandboxes and containers.
	Configs Configs
	// ContainerID is a container's ID in a pod status, "<runtime>://<id>"
	// (PodReader's ContainerID).
	ContainerID func(id string) string
	// NodeRoot is the nodes' disks (Config.NodeRoot), "" without them: no
	// termination-log files then.
	NodeRoot string
	// OnDisk is the real path of a path of the node's disk.
	OnDisk func(nodePath string) string
	// PodDNS is the pod's resolv.conf, for its sandbox (dns.go).
	PodDNS func(*corev1.Pod) (*runtimeapi.DNSConfig, error)
	// HostsMount is the mount of the pod's /etc/hosts into c, nil if it
	// gets none (etchosts.go).
	HostsMount func(*corev1.Pod, *kubecontainer.PodSandbox, corev1.Container) (*runtimeapi.Mount, error)
	// ProbePort resolves a handler's port, a number or the name of one of
	// c's ports, as the probes do (package prober's Port).
	ProbePort func(intstr.IntOrString, corev1.Container) (int, error)
	// HTTPClient GETs through the pod network (podnetwork.go), for the
	// httpGet hooks.
	HTTPClient func() *http.Client
}

// Getter reads one object from the API server (client.Client's Get).
type Getter interface {
	Get(ctx context.Context, r client.Resource, namespace, name string, out runtime.Object) error
}

// Recorder records an event about obj (record.Recorder's Event).
type Recorder interface {
	Event(obj runtime.Object, eventType, reason, messageFmt string, args ...any)
}

// NewManager returns the runtime manager of a node.
func NewManager(opts Options) *Manager { return &Manager{Options: opts} }

// MinGracePeriod is the kubelet's minimumGracePeriodInSeconds: a
// container is always given 2 s to stop, even when asked for less.
const MinGracePeriod = 2

// GracePeriod is the StopContainer timeout for a grace period in
// seconds (nil: the API default of 30).
func GracePeriod(seconds *int64) int64 {
	return max(ptr.Deref(seconds, corev1.DefaultTerminationGracePeriodSeconds), MinGracePeriod)
}

// StopContainer asks the runtime to stop c within timeout seconds: the
// stop signal, then SIGKILL when the time is up.
func (m *Manager) StopContainer(ctx context.Context, c *kubecontainer.Container, timeout int64) error {
	if _, err := m.Runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: c.RawID, Timeout: timeout}); err != nil {
		return fmt.Errorf("stop container %s: %w", c.Name, err)
	}
	return nil
}

// PodRef names a pod as the kubelet's messages do: "name_namespace(uid)".
func PodRef(pod *corev1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}
