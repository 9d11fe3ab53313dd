package kubelet

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/kubelet/lifecycle"
)

// Pod admission is package lifecycle's; the kubelet gives it the node to
// judge pods against and writes the verdict of a pod it rejects.

// nodeSource is the node as admission sees it (lifecycle.NodeSource).
type nodeSource struct{ k *Kubelet }

// ParseAllowedUnsafeSysctls parses --allowed-unsafe-sysctls (see
// lifecycle.ParseAllowedUnsafeSysctls).
func ParseAllowedUnsafeSysctls(s string) ([]string, error) {
	return lifecycle.ParseAllowedUnsafeSysctls(s)
}

// rejectPod fails pod for r, as the kubelet's rejectPod: the status says
// only why (no containers were made), the event too.
func (k *Kubelet) rejectPod(ctx context.Context, pod *corev1.Pod, r *lifecycle.Rejection) error {
	k.recorder.Event(pod, corev1.EventTypeWarning, r.Reason, "%s", r.Message)
	k.log.Info("pod rejected: "+r.Message, "pod", client.KeyOf(pod), "reason", r.Reason)
	next := pod.DeepCopy()
	next.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: r.Reason, Message: "Pod was rejected: " + r.Message, QOSClass: pod.Status.QOSClass}
	err := k.client.UpdateStatus(ctx, client.Pods, pod.Namespace, pod.Name, next, &corev1.Pod{})
	if apierrors.IsNotFound(err) {
		return nil // gone meanwhile
	}
	return err // a conflict is retried: the pod is admitted anew
}

// Node is this node as the API server has it (labels and taints
// are users' to change): from the fleet's node informer, or read once if
// the informer has not seen it yet.
func (n nodeSource) Node(ctx context.Context) (*corev1.Node, error) {
	if obj, ok := n.k.fleet.nodes.Cache().Get(n.k.cfg.NodeName); ok {
		return obj.(*corev1.Node), nil
	}
	return n.ReadNode(ctx)
}

// ReadNode is this node as the API server has it now.
func (n nodeSource) ReadNode(ctx context.Context) (*corev1.Node, error) {
	node := &corev1.Node{}
	if err := n.k.client.Get(ctx, client.Nodes, "", n.k.cfg.NodeName, node); err != nil {
		return nil, fmt.Errorf("get node for admission: %w", err)
	}
	return node, nil
}
