package envvars

import (
	"context"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/internal/seedstep"
	kubecontainer "github.com/mkube/mkube/kubelet/container"
)

// Builder makes the environments of one node's containers, and reports
// a container it cannot make one for. What it reads is the kubelet's,
// passed in.
type Builder struct {
	NodeIP      string              // status.hostIP, and a hostNetwork pod's status.podIP
	Allocatable corev1.ResourceList // the node's, for resourceFieldRefs
	// Services lists every Service (the fleet's informer).
	Services func() []*corev1.Service
	// ConfigMap and Secret read an object (the kubelet's objects.go): one
	// that does not exist is a NotFound error, worded by NotFound.
	ConfigMap func(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	Secret    func(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	// PodField and ResourceField resolve a fieldRef and a
	// resourceFieldRef (the kubelet's downward API, downwardapi.go).
	PodField      func(pod *corev1.Pod, path, hostIP, podIP string) (string, error)
	ResourceField func(pod *corev1.Pod, c corev1.Container, sel *corev1.ResourceFieldSelector, allocatable corev1.ResourceList) (string, error)
	Recorder      *record.Recorder
	// Retry syncs the pod of key again after a while (the node's queue).
	Retry func(key string, after time.Duration)
	Log   *slog.Logger
}

// ContainerEnv is container c's environment as this node sees it: the
// ConfigMaps, Secrets and Services from the fleet's informers, the pod's
// IP from its sandbox sb.
func (b *Builder) ContainerEnv(ctx context.Context, pod *corev1.Pod, sb *kubecontainer.PodSandbox, c corev1.Container) ([]corev1.EnvVar, error) {
	hostIP, podIP := b.NodeIP, sb.IP
	if pod.Spec.HostNetwork {
		podIP = hostIP
	}
	return makeEnv(pod, c, envSources{
		configMap: func(name string) (*corev1.ConfigMap, error) { return b.ConfigMap(ctx, pod.Namespace, name) },
		secret:    func(name string) (*corev1.Secret, error) { return b.Secret(ctx, pod.Namespace, name) },
		services:  b.Services(), hostIP: hostIP, podIP: podIP, allocatable: b.Allocatable,
		podField: b.PodField, resourceField: b.ResourceField,
	})
}

// NotFound words a NotFound as the kubelet's ConfigMap and Secret
// managers do, in the singular: `configmap "x" not found`, where the API
// server says `configmaps "x" not found`.
func NotFound(resource, name string, err error) error {
	if apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(schema.GroupResource{Resource: resource}, name)
	}
	return err
}

// reasonCreateContainerConfigError is the waiting reason of a container
// whose config the kubelet could not make (kuberuntime's
// ErrCreateContainerConfig), most often for a missing ConfigMap or Secret.
const reasonCreateContainerConfigError = "CreateContainerConfigError"

// configErrorRetry is how often a pod whose container config failed is
// synced again: the kubelet's pod workers retry a failed sync after
// their backOffPeriod, 10 s, and the retry is what starts the container
// once the ConfigMap exists, without anything touching the pod. It is
// not the crash-loop back-off: nothing ran.
const configErrorRetry = 10 * time.Second

// ConfigError reports that container c cannot be created for err, as
// kuberuntime's startContainer does: a Warning event Failed with
// "Error: <err>", and the waiting state to report; the pod is synced
// again after configErrorRetry.
//
// Every sync that fails asks for its own retry, and this kubelet also
// syncs a pod when its own status write comes back through the informer
// (a real one ignores status-only updates), so the Failed event's count
// grows a few times faster than on a real node.
func (b *Builder) ConfigError(pod *corev1.Pod, c corev1.Container, err error) *corev1.ContainerStateWaiting {
	key, msg := client.KeyOf(pod), err.Error()
	b.Recorder.Event(pod, corev1.EventTypeWarning, "Failed", "Error: %s", msg)
	b.Log.Warn("cannot create container: its config refers to what is missing (CreateContainerConfigError)", seedstep.Key, seedstep.KubeletStartsPod,
		"pod", key, "container", c.Name, "err", msg, "retryIn", configErrorRetry)
	b.Retry(key, configErrorRetry)
	return &corev1.ContainerStateWaiting{Reason: reasonCreateContainerConfigError, Message: msg}
}
