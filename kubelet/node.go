package kubelet

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/network/podnetwork"
)

// Registration retries start fast, for an API server that is just coming
// up, and stop doubling at 7s, the kubelet's own cap.
const (
	registerInitialBackoff = 100 * time.Millisecond
	registerMaxBackoff     = 7 * time.Second
)

var nodeTypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}

// newNode is the Node a kubelet registers: its name and well-known labels,
// the podCIDR its pods' IPs come from, the taints it was started with, and
// a full status (what a kubelet builds in initialNodeStatus).
//
// In Kubernetes, kube-controller-manager's node IPAM controller assigns
// spec.podCIDR; mkube has no such controller, so the kubelet sets it.
func newNode(cfg Config, rt runtimeInfo, now time.Time) *corev1.Node {
	cidr := cfg.PodCIDR.String()
	node := &corev1.Node{
		TypeMeta:   nodeTypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: cfg.NodeName, Labels: nodeLabels(cfg)},
		Spec: corev1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr},
			Taints: append([]corev1.Taint(nil), cfg.Taints...)},
	}
	node.Status = nodeStatus(cfg, rt, corev1.NodeStatus{}, now)
	return node
}

// nodeLabels are the well-known labels every kubelet sets, which
// nodeSelectors and topology spreading rely on, overridden by --labels
// (a real kubelet lets --node-labels win too).
func nodeLabels(cfg Config) map[string]string {
	labels := map[string]string{
		corev1.LabelHostname:      cfg.NodeName,
		corev1.LabelOSStable:      "linux",
		corev1.LabelArchStable:    "amd64",
		"beta.kubernetes.io/os":   "linux",
		"beta.kubernetes.io/arch": "amd64",
	}
	maps.Copy(labels, cfg.Labels)
	return labels
}

// mergeNode is how a restarted kubelet updates the Node it registered
// before: its labels and taints are added to what is there, so that labels
// and taints a user added with kubectl survive the restart, and a podCIDR
// is set only if the node has none (it is immutable in Kubernetes). The
// pod network's peer address is the runtime's now: it may have moved.
func mergeNode(existing, want *corev1.Node) *corev1.Node {
	out := existing.DeepCopy()
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	maps.Copy(out.Labels, want.Labels)
	for _, t := range want.Spec.Taints {
		if !hasTaint(out.Spec.Taints, t) {
			out.Spec.Taints = append(out.Spec.Taints, t)
		}
	}
	if out.Spec.PodCIDR == "" {
		out.Spec.PodCIDR, out.Spec.PodCIDRs = want.Spec.PodCIDR, want.Spec.PodCIDRs
	}
	podnetwork.SetPeerAnnotation(out, want.Annotations[podnetwork.AnnotationPeer])
	return out
}

// hasTaint: a taint is identified by its key and effect.
func hasTaint(taints []corev1.Taint, t corev1.Taint) bool {
	for _, have := range taints {
		if have.Key == t.Key && have.Effect == t.Effect {
			return true
		}
	}
	return false
}

// registerNode creates this node's Node object (POST /api/v1/nodes) or, if
// an earlier run created it, brings it up to date. Like the kubelet's
// registerWithAPIServer it retries until it succeeds or ctx ends.
func (k *Kubelet) registerNode(ctx context.Context) error {
	backoff := registerInitialBackoff
	for {
		err := k.tryRegisterNode(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("register node %s: %w", k.cfg.NodeName, ctx.Err())
		}
		k.log.Warn("node registration failed, retrying", "err", err, "after", backoff)
		select {
		case <-ctx.Done():
		case <-k.clock.After(backoff):
		}
		backoff = min(2*backoff, registerMaxBackoff)
	}
}

func (k *Kubelet) tryRegisterNode(ctx context.Context) error {
	rt, err := k.runtimeInfo(ctx)
	if err != nil {
		return err
	}
	want := newNode(k.cfg, rt, k.clock.Now())
	podnetwork.SetPeerAnnotation(want, k.runtime.peerAddress) // network/podnetwork
	created := &corev1.Node{}
	err = k.client.Create(ctx, client.Nodes, "", want, created)
	if err == nil {
		k.setNode(created)
		k.log.Info("registered node", "internalIP", k.cfg.NodeIP.String(), "podCIDR", created.Spec.PodCIDR,
			"capacity", resourceSummary(created.Status.Capacity), "taints", len(created.Spec.Taints))
		k.recorder.Event(k.node, corev1.EventTypeNormal, "Starting", "Starting kubelet.")
		k.recorder.Event(k.node, corev1.EventTypeNormal, "NodeReady", "Node %s status is now: NodeReady", k.cfg.NodeName)
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create node: %w", err)
	}

	existing := &corev1.Node{}
	if err := k.client.Get(ctx, client.Nodes, "", k.cfg.NodeName, existing); err != nil {
		return fmt.Errorf("get node: %w", err)
	}
	k.restoreImages(existing.Status.Images)
	updated := &corev1.Node{}
	if err := k.client.Update(ctx, client.Nodes, "", k.cfg.NodeName, mergeNode(existing, want), updated); err != nil {
		return fmt.Errorf("update node: %w", err) // a conflict is retried by registerNode
	}
	k.setNode(updated)
	k.log.Info("node was registered before: updated its labels and taints", "internalIP", k.cfg.NodeIP.String(),
		"podCIDR", updated.Spec.PodCIDR, "images", len(existing.Status.Images))
	k.recorder.Event(k.node, corev1.EventTypeNormal, "Starting", "Starting kubelet.")
	return k.updateNodeStatus(ctx)
}

func (k *Kubelet) setNode(n *corev1.Node) {
	k.node = &corev1.Node{TypeMeta: nodeTypeMeta, ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: n.UID}}
}

// resourceSummary prints a resource list compactly for the log.
func resourceSummary(l corev1.ResourceList) string {
	cpu, mem, pods := l[corev1.ResourceCPU], l[corev1.ResourceMemory], l[corev1.ResourcePods]
	return fmt.Sprintf("cpu=%s memory=%s pods=%s", cpu.String(), mem.String(), pods.String())
}
