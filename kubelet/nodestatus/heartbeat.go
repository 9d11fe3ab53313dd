package nodestatus

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"

	"github.com/mkube/mkube/client"
)

// Run renews the node status and lease every StatusInterval
// until ctx ends. A node whose heartbeats stop is marked NotReady (then
// its pods evicted) by the node lifecycle controller.
func (m *Manager) Run(ctx context.Context, offset time.Duration) {
	// A fleet's nodes beat in turn, spread over the interval, rather than
	// thousands at once.
	if offset > 0 {
		select {
		case <-ctx.Done():
			return
		case <-m.o.Clock.After(offset):
		}
	}
	t := m.o.Clock.NewTicker(m.o.StatusInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			m.heartbeat(ctx)
		}
	}
}

// heartbeat is one round of both of a kubelet's heartbeats: the Lease,
// cheap and frequent, and the node status, which also carries the images.
// Failures are logged and retried at the next round.
func (m *Manager) heartbeat(ctx context.Context) {
	if due, err := m.nodeStatusDue(ctx); err != nil && ctx.Err() == nil {
		m.o.Log.Warn("node status check failed", "err", err)
	} else if due {
		if err := m.updateNodeStatus(ctx); err != nil && ctx.Err() == nil {
			m.o.Log.Warn("node status update failed", "err", err)
		}
	}
	if err := m.o.Lease.Renew(ctx); err != nil && ctx.Err() == nil {
		m.o.Log.Warn("node lease renewal failed", "err", err)
	}
}

// nodeStatusDue says whether this heartbeat writes the node status: every
// one, unless NodeStatusReportFrequency is set (a fleet's nodes: 5 min,
// as Kubernetes'), then only when it is that old or the node's images
// changed; the Lease alone says the node is alive meanwhile (KEP-589).
func (m *Manager) nodeStatusDue(ctx context.Context) (bool, error) {
	if m.o.NodeStatusReportFrequency <= 0 {
		return true, nil
	}
	rt, err := m.runtimeInfo(ctx)
	if err != nil {
		return false, err
	}
	return m.state.Changed(rt.Images, rt.Down, memoryPressure(m.o.Capacity, rt.MemoryUsed)), nil
}

// updateNodeStatus re-reads the Node and writes its new status with PUT
// nodes/NAME/status, retrying on conflict (the node's labels or taints may
// be changed by users at any time).
func (m *Manager) updateNodeStatus(ctx context.Context) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node := &corev1.Node{}
		if err := m.o.Client.Get(ctx, client.Nodes, "", m.o.NodeName, node); err != nil {
			if apierrors.IsNotFound(err) {
				// As a real kubelet: it registers once, at start.
				return fmt.Errorf("node %s was deleted; restart the kubelet to register it again: %w", m.o.NodeName, err)
			}
			return fmt.Errorf("get node: %w", err)
		}
		next := node.DeepCopy()
		rt, err := m.runtimeInfo(ctx)
		if err != nil {
			return err
		}
		next.Status = nodeStatus(m.o.Config, rt, node.Status, m.o.Clock.Now())
		if err := m.o.Client.UpdateStatus(ctx, client.Nodes, "", node.Name, next, next); err != nil {
			return fmt.Errorf("update node status: %w", err)
		}
		m.state.Reported(rt.Images, rt.Down, memoryPressure(m.o.Capacity, rt.MemoryUsed))
		if rt.Down != "" {
			m.o.Log.Warn("node not ready: the container runtime does not answer", "err", rt.Down)
		}
		switch was, is := NodeReady(node.Status), NodeReady(next.Status); {
		case !was && is:
			m.o.Recorder.Event(m.node, corev1.EventTypeNormal, "NodeReady", "Node %s status is now: NodeReady", m.o.NodeName)
		case was && !is:
			m.o.Recorder.Event(m.node, corev1.EventTypeNormal, "NodeNotReady", "Node %s status is now: NodeNotReady", m.o.NodeName)
		}
		m.o.Log.Debug("node status updated", "rv", next.ResourceVersion, "images", len(next.Status.Images))
		return nil
	})
}
