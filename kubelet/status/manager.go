package status

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/podcondition"
	"github.com/mkube/mkube/internal/seedstep"
	kubetypes "github.com/mkube/mkube/kubelet/types"
)

// Failure is why the kubelet failed a pod itself (an active deadline
// passed, an eviction): the pod is reported Failed with its reason and
// message, whatever its containers do.
type Failure struct{ Reason, Message string }

// Manager writes one node's pod statuses to the API server and keeps the
// failures the kubelet decided. Its methods are safe for concurrent use:
// the pod workers call them.
type Manager struct {
	client *client.Client // the node's own, impersonated as the node
	clock  clock.Clock
	log    *slog.Logger
	// apiUID is the UID the API server knows a pod by: a static pod's
	// is its mirror's (package config).
	apiUID func(types.UID) types.UID

	mu       sync.Mutex
	failures map[types.UID]Failure // the pods the kubelet failed
}

// NewManager returns the status manager of the node whose requests c
// makes.
func NewManager(c *client.Client, apiUID func(types.UID) types.UID, clk clock.Clock, log *slog.Logger) *Manager {
	return &Manager{client: c, clock: clk, log: log, apiUID: apiUID, failures: map[types.UID]Failure{}}
}

// Fail records that the kubelet failed the pod with uid for f, unless it
// had failed it already; it says whether it had.
func (m *Manager) Fail(uid types.UID, f Failure) (known bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, known = m.failures[uid]
	if !known {
		m.failures[uid] = f
	}
	return known
}

// SetFailure records f as why the kubelet failed the pod with uid, in
// place of any earlier one; it says whether there was one.
func (m *Manager) SetFailure(uid types.UID, f Failure) (known bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, known = m.failures[uid]
	m.failures[uid] = f
	return known
}

// Failure is why the kubelet failed the pod, if it did.
func (m *Manager) Failure(uid types.UID) (Failure, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.failures[uid]
	return f, ok
}

// Forget drops what the manager knows of a pod gone from the API server.
func (m *Manager) Forget(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.failures, uid)
}

// Report is step 13 seen from the kubelet (its status manager): it
// computes the pod's status with generate and, if that differs from the
// pod's current status, writes it with PUT pods/NAME/status; the API
// server stores it in etcd. A pod the kubelet failed (Fail) is reported
// Failed with the failure's reason and message.
//
// The write carries the pod's resourceVersion, so it fails with 409
// Conflict if somebody wrote the pod since it was read (the informer's copy
// may also just be behind our own last write). Then the pod is read again
// and the status recomputed against it, up to five times 10ms apart
// (client-go's retry.DefaultRetry); after that the error sends the pod
// back to the work queue.
//
// It returns the pod as now stored, or nil if the pod is gone or was
// replaced by a new pod of the same name.
func (m *Manager) Report(ctx context.Context, pod *corev1.Pod, generate func(*corev1.Pod) corev1.PodStatus) (*corev1.Pod, error) {
	var stored *corev1.Pod
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		status := generate(pod)
		if f, failed := m.Failure(pod.UID); failed {
			// The kubelet failed the pod itself (activeDeadlineSeconds).
			status.Phase, status.Reason, status.Message = corev1.PodFailed, f.Reason, f.Message
		}
		if equality.Semantic.DeepEqual(pod.Status, status) {
			stored = pod
			return nil
		}
		next := pod.DeepCopy()
		next.Status = status
		next.UID = m.apiUID(pod.UID) // a static pod's status goes to its mirror
		out := &corev1.Pod{}
		err := m.client.UpdateStatus(ctx, client.Pods, pod.Namespace, pod.Name, next, out)
		if apierrors.IsConflict(err) {
			fresh, gerr := m.getPod(ctx, pod)
			if gerr != nil {
				return gerr
			}
			pod = fresh
			return err // retried against the fresh pod
		}
		if err != nil {
			return fmt.Errorf("update pod status: %w", err)
		}
		m.log.Info("reported pod status", seedstep.Key, seedstep.PodStatusStored, "pod", client.KeyOf(out), "phase", status.Phase,
			"podIP", status.PodIP, "ready", readyStatus(next), "rv", out.ResourceVersion)
		out.SetGroupVersionKind(kubetypes.PodGVK)
		out.UID = pod.UID
		stored = out
		return nil
	})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return stored, err
}

// getPod reads the pod afresh; a pod of the same name but another UID is
// reported as NotFound, since the pod we knew is gone.
func (m *Manager) getPod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	fresh := &corev1.Pod{}
	if err := m.client.Get(ctx, client.Pods, pod.Namespace, pod.Name, fresh); err != nil {
		return nil, err
	}
	if fresh.UID != m.apiUID(pod.UID) {
		return nil, apierrors.NewNotFound(corev1.Resource("pods"), pod.Name)
	}
	fresh.UID = pod.UID
	if kubetypes.IsMirrorPod(fresh) {
		// The static pod's spec is the mirror's; it was not changed.
		fresh.Spec = pod.Spec
	}
	fresh.SetGroupVersionKind(kubetypes.PodGVK)
	return fresh, nil
}

// readyStatus is the status of the pod's Ready condition, Unknown if it
// has none.
func readyStatus(pod *corev1.Pod) corev1.ConditionStatus {
	if c := podcondition.Get(pod, corev1.PodReady); c != nil {
		return c.Status
	}
	return corev1.ConditionUnknown
}
