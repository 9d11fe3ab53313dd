package config

import (
	"context"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	kubetypes "github.com/mkube/mkube/kubelet/types"
)

// Static pods (seed 003 §4.2): pods the kubelet runs from files in
// --pod-manifest-path, with no API server telling it to, which is how a
// kubeadm node runs its own control plane. The kubelet reads the
// directory every --file-check-frequency; a file added runs its pod, a
// file changed restarts it, a file removed stops it.
//
// So that `kubectl get pods` shows them, the kubelet creates a mirror pod
// for each: "<name>-<node>", annotated kubernetes.io/config.mirror and
// owned by the Node. The mirror only shows the static pod; deleting it
// deletes nothing that runs, and the kubelet creates it again.
//
// The static pod's identity in the runtime is its config hash, not the
// mirror's UID (which changes with every new mirror): the pipeline runs a
// copy of the mirror whose UID is the hash, and the status manager writes
// its status to the mirror (see StaticPods.APIUID).

// DefaultFileCheckFrequency is the kubelet's --file-check-frequency.
const DefaultFileCheckFrequency = 20 * time.Second

// Queue is the node's pod queue, by key.
type Queue interface {
	Add(key string)
	AddAfter(key string, d time.Duration)
}

// Options are what a node's Manager is given by its kubelet: where the
// manifests are, the API, and the kubelet's pod worker's acts, which a
// static pod goes through as any pod.
type Options struct {
	NodeName           string
	ManifestPath       string        // --pod-manifest-path
	FileCheckFrequency time.Duration // how often it is read again
	// Pods is the kubelet's memory of its static pods, which its pod
	// worker and status manager read too.
	Pods   *StaticPods
	Client *client.Client
	// Node is the registered Node, which owns the mirrors.
	Node func() *corev1.Node
	// Mirror is the pod named key as the informer has it (the mirror).
	Mirror func(key string) (*corev1.Pod, bool)
	Queue  Queue
	// Stopping: a background stop of the pod's containers is under way.
	Stopping func(uid types.UID) bool
	// InBackground runs fn for pod in its own goroutine, once at a time
	// per pod, then syncs the pod again.
	InBackground func(ctx context.Context, pod *corev1.Pod, what string, fn func() error)
	// StopContainers stops the pod's running containers, if it has a
	// sandbox, with its own grace period.
	StopContainers func(ctx context.Context, pod *corev1.Pod) error
	// ForgetPod removes the sandboxes of the pods named key other than
	// keep ("" removes them all); ReleasePod frees those of a finished
	// pod; RunPod makes the node run pod.
	ForgetPod  func(ctx context.Context, key string, keep types.UID) error
	ReleasePod func(ctx context.Context, pod *corev1.Pod, why string) error
	RunPod     func(ctx context.Context, pod *corev1.Pod) error
	Clock      clock.WithTicker
	Log        *slog.Logger
}

// Manager is a node's static pods: it reads their manifests (file.go),
// syncs each with its mirror, and creates and deletes the mirrors
// (mirror.go).
type Manager struct{ o Options }

// NewManager returns the static pod manager of a node.
func NewManager(o Options) *Manager { return &Manager{o: o} }

// Sync makes the node match the static pod named key and its
// mirror (nil if the API server has none).
func (m *Manager) Sync(ctx context.Context, key string, sp *StaticPod, mirror *corev1.Pod) error {
	switch {
	case sp == nil && mirror != nil && m.o.Stopping(kubetypes.RuntimeUID(mirror)):
		return nil // being stopped (stopStatic), which deletes the mirror after
	case sp == nil:
		// The manifest is gone: stop the pod, delete its mirror.
		if mirror != nil {
			if err := m.deleteMirror(ctx, mirror, "its manifest was removed"); err != nil {
				return err
			}
		}
		return m.o.ForgetPod(ctx, key, "")
	case mirror == nil:
		if wait := m.o.Pods.RecreateWait(key, m.o.Clock.Now()); wait > 0 {
			m.o.Queue.AddAfter(key, wait)
			return nil
		}
		return m.createMirror(ctx, sp)
	case mirror.Annotations[kubetypes.ConfigMirrorAnnotationKey] != sp.Hash:
		// The manifest changed: the old mirror goes, the new one comes
		// when the deletion is seen; ForgetPod below stops the old pod.
		if err := m.deleteMirror(ctx, mirror, "its manifest changed"); err != nil {
			return err
		}
		return m.o.ForgetPod(ctx, key, types.UID(sp.Hash))
	case mirror.DeletionTimestamp != nil:
		// `kubectl delete` of a mirror deletes only the mirror: the
		// static pod keeps running, and a new mirror appears.
		m.o.Pods.MirrorDeleted(key, m.o.Clock.Now())
		return m.deleteMirror(ctx, mirror, "it was deleted; the static pod runs on and gets a new mirror")
	}
	view := mirror.DeepCopy()
	view.SetGroupVersionKind(kubetypes.PodGVK)
	view.UID = types.UID(sp.Hash)
	m.o.Pods.SetMirrorUID(view.UID, mirror.UID)
	if err := m.o.ForgetPod(ctx, key, view.UID); err != nil {
		return err
	}
	if kubetypes.PodFinished(view) {
		return m.o.ReleasePod(ctx, view, "static pod finished")
	}
	return m.o.RunPod(ctx, view)
}

// stopStatic stops the pod of a removed manifest as a deletion would:
// its containers get their grace period (nginx its stop signal, a
// sleeping shell its 30 s), then its sandbox and mirror go.
func (m *Manager) stopStatic(ctx context.Context, key string, sp *StaticPod) {
	view := sp.Mirror.DeepCopy()
	view.UID = types.UID(sp.Hash)
	view.SetGroupVersionKind(kubetypes.PodGVK)
	m.o.InBackground(ctx, view, "stopping a static pod", func() error {
		if err := m.o.StopContainers(ctx, view); err != nil {
			return err
		}
		if mirror, ok := m.o.Mirror(key); ok {
			if err := m.deleteMirror(ctx, mirror, "its manifest was removed"); err != nil {
				return err
			}
		}
		return m.o.ForgetPod(ctx, key, "")
	})
}
