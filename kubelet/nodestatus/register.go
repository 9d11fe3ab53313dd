package nodestatus

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
	for k, v := range want.Annotations { // the kubelet's own: ours to set
		if k != podnetwork.AnnotationPeer {
			metav1.SetMetaDataAnnotation(&out.ObjectMeta, k, v)
		}
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

// Register registers the node, writes its CSINode and creates its lease.
func (m *Manager) Register(ctx context.Context) error {
	if err := m.registerNode(ctx); err != nil {
		return err
	}
	// The CSINode is owned by the Node, so it comes once the Node has its
	// uid. Without it the node limits no volumes: the node still runs.
	if err := m.syncCSINode(ctx); err != nil && ctx.Err() == nil {
		m.o.Log.Warn("CSINode not written: the node's volumes are not limited", "err", err)
	}
	// Registration wrote the node status; the lease comes at once too, not
	// after the first StatusInterval.
	if err := m.o.Lease.Renew(ctx); err != nil && ctx.Err() == nil {
		m.o.Log.Warn("node lease creation failed", "err", err)
	}
	return nil
}

// registerNode creates this node's Node object (POST /api/v1/nodes) or, if
// an earlier run created it, brings it up to date. Like the kubelet's
// registerWithAPIServer it retries until it succeeds or ctx ends.
func (m *Manager) registerNode(ctx context.Context) error {
	backoff := registerInitialBackoff
	for {
		err := m.tryRegisterNode(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("register node %s: %w", m.o.NodeName, ctx.Err())
		}
		m.o.Log.Warn("node registration failed, retrying", "err", err, "after", backoff)
		select {
		case <-ctx.Done():
		case <-m.o.Clock.After(backoff):
		}
		backoff = min(2*backoff, registerMaxBackoff)
	}
}

func (m *Manager) tryRegisterNode(ctx context.Context) error {
	rt, err := m.runtimeInfo(ctx)
	if err != nil {
		return err
	}
	want := newNode(m.o.Config, rt, m.o.Clock.Now())
	podnetwork.SetPeerAnnotation(want, m.o.PeerAddress) // network/podnetwork
	for k, v := range m.o.Annotations {
		metav1.SetMetaDataAnnotation(&want.ObjectMeta, k, v)
	}
	created := &corev1.Node{}
	err = m.o.Client.Create(ctx, client.Nodes, "", want, created)
	if err == nil {
		m.setNode(created)
		m.o.Log.Info("registered node", "internalIP", m.o.NodeIP.String(), "podCIDR", created.Spec.PodCIDR,
			"capacity", resourceSummary(created.Status.Capacity), "taints", len(created.Spec.Taints))
		m.o.Recorder.Event(m.node, corev1.EventTypeNormal, "Starting", "Starting kubelet.")
		m.o.Recorder.Event(m.node, corev1.EventTypeNormal, "NodeReady", "Node %s status is now: NodeReady", m.o.NodeName)
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create node: %w", err)
	}

	existing := &corev1.Node{}
	if err := m.o.Client.Get(ctx, client.Nodes, "", m.o.NodeName, existing); err != nil {
		return fmt.Errorf("get node: %w", err)
	}
	m.o.RestoreImages(existing.Status.Images)
	updated := &corev1.Node{}
	if err := m.o.Client.Update(ctx, client.Nodes, "", m.o.NodeName, mergeNode(existing, want), updated); err != nil {
		return fmt.Errorf("update node: %w", err) // a conflict is retried by registerNode
	}
	m.setNode(updated)
	m.o.Log.Info("node was registered before: updated its labels and taints", "internalIP", m.o.NodeIP.String(),
		"podCIDR", updated.Spec.PodCIDR, "images", len(existing.Status.Images))
	m.o.Recorder.Event(m.node, corev1.EventTypeNormal, "Starting", "Starting kubelet.")
	return m.updateNodeStatus(ctx)
}

func (m *Manager) setNode(n *corev1.Node) {
	m.node = &corev1.Node{TypeMeta: nodeTypeMeta, ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: n.UID}}
}

// resourceSummary prints a resource list compactly for the log.
func resourceSummary(l corev1.ResourceList) string {
	cpu, mem, pods := l[corev1.ResourceCPU], l[corev1.ResourceMemory], l[corev1.ResourcePods]
	return fmt.Sprintf("cpu=%s memory=%s pods=%s", cpu.String(), mem.String(), pods.String())
}
