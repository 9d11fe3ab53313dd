package volumemanager

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/internal/seedstep"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
)

// Options are what a Manager needs of its node's kubelet. The funcs and
// Sources are the kubelet's own (its informers, token manager, image
// manager, status writer, work queue): the manager calls them, never the
// other way round.
type Options struct {
	Client   *client.Client   // the node's own: GETs of claims and volumes, the LIST of a Multi-Attach check
	Recorder *record.Recorder // FailedMount events, signed by the node's kubelet
	// NodeName is the node; NodeRoot stands for the nodes' disks (node N's
	// "/" is NodeRoot/N, "" sets up no volume) and NFSRoot for the NFS
	// servers ("" refuses nfs volumes), as the kubelet's Config says.
	NodeName, NodeRoot, NFSRoot string
	// Memory is the node's allocatable memory, the most a tmpfs may hold.
	Memory *resource.Quantity
	// Sources are where a payload volume's files come from (payload.go).
	Sources Sources
	// SubPath is the subdirectory of its volume that a volumeMount shows
	// ("" for all of it), its subPathExpr expanded against the
	// container's environment env by the kubelet's $(VAR) expansion.
	SubPath func(m corev1.VolumeMount, env []corev1.EnvVar) (string, error)
	// EnsureImage pulls an image as the kubelet pulls a container's
	// (package images): a waiting state while it is not on the node.
	EnsureImage func(ctx context.Context, pod *corev1.Pod, c corev1.Container) (*corev1.ContainerStateWaiting, error)
	// Requeue syncs the pod of key again after a while.
	Requeue func(key string, after time.Duration)
	// ReportStatus writes the pod's status as it is (ContainerCreating
	// while its volumes wait).
	ReportStatus func(ctx context.Context, pod *corev1.Pod, sb *kubecontainer.PodSandbox) error
	Clock        clock.PassiveClock // dates the versions of payload volumes
	Log          *slog.Logger
}

// Manager sets up and tears down the volumes of one node's pods, as the
// kubelet's volume manager (its reconciler and operation executor) does
// before a pod's containers start, and remembers what it did (State).
type Manager struct {
	opts  Options
	state State
}

// NewManager returns the volume manager of the node opts describe.
func NewManager(opts Options) *Manager { return &Manager{opts: opts} }

// OnDisk is where a node path of the manager's node is on the real
// machine: the kubelet's files beside the volumes (/etc/hosts, the
// termination logs) are on the same disk.
func (m *Manager) OnDisk(nodePath string) string {
	return OnDisk(m.opts.NodeRoot, m.opts.NodeName, nodePath)
}

// mountRetry is how soon a pod whose volumes could not be set up is
// synced again (the volume manager retries with a back-off from 500 ms;
// a few seconds is what a learner waits for a ConfigMap they create).
const mountRetry = 2 * time.Second

// MountVolumes is runPod's volume step: the pod's containers start only
// once its volumes are set up. Until then it reports ContainerCreating,
// records FailedMount and tries again. Later, a volume that cannot be
// refreshed (its ConfigMap deleted) keeps its last content, as in
// Kubernetes, and the containers run on.
func (m *Manager) MountVolumes(ctx context.Context, pod *corev1.Pod, sb *kubecontainer.PodSandbox) (bool, error) {
	err := m.setUpVolumes(ctx, pod)
	mounted := m.state.SetUp(pod.UID, err == nil)
	if err == nil {
		return true, nil
	}
	var ve volumeError
	if !errors.As(err, &ve) {
		return mounted, err
	}
	var attach *attachError
	if !errors.As(err, &attach) { // a Multi-Attach error has its own event, recorded once
		m.opts.Recorder.Event(pod, corev1.EventTypeWarning, ve.reason(), "%v", err)
	}
	key := client.KeyOf(pod)
	if mounted {
		m.opts.Log.Warn("could not refresh a volume: it keeps its last content", "pod", key, "err", err)
		return true, nil
	}
	m.opts.Log.Warn("cannot start the pod's containers yet: a volume cannot be set up", seedstep.Key, seedstep.KubeletStartsPod,
		"pod", key, "err", err, "retryIn", mountRetry)
	m.opts.Requeue(key, mountRetry)
	return false, m.opts.ReportStatus(ctx, pod, sb)
}

// TearDownVolumes removes the pod's directory with its volumes (not its
// hostPath and nfs ones, which are not in it): the pod is gone.
func (m *Manager) TearDownVolumes(uid types.UID) {
	if m.opts.NodeRoot == "" {
		return
	}
	m.state.Forget(uid)
	if err := UnmountPod(m.OnDisk("/"), uid); err != nil {
		m.opts.Log.Warn("could not unmount the pod's tmpfs volumes", "uid", uid, "err", err)
	}
	if err := os.RemoveAll(m.OnDisk(PodDir(uid))); err != nil {
		m.opts.Log.Warn("could not remove the pod's volumes", "uid", uid, "err", err)
	}
}
