package dashboard

import (
	corev1 "k8s.io/api/core/v1"
)

// PodSummary is what the cluster view draws of a pod.
type PodSummary struct {
	Node     string `json:"node,omitempty"` // spec.nodeName; "" while unscheduled
	Phase    string `json:"phase"`
	Ready    bool   `json:"ready"`    // the Ready condition is True
	Restarts int32  `json:"restarts"` // summed over its containers
	// Reason is what `kubectl get pods` would print in STATUS when it is
	// not the phase: a waiting container's reason (CrashLoopBackOff,
	// ContainerCreating) or Terminating.
	Reason string `json:"reason,omitempty"`
}

// NodeSummary is what the cluster view draws of a node.
type NodeSummary struct {
	Ready         bool `json:"ready"`
	Unschedulable bool `json:"unschedulable,omitempty"`
}

func summarizePod(p *corev1.Pod) *PodSummary {
	s := &PodSummary{Node: p.Spec.NodeName, Phase: string(p.Status.Phase)}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			s.Ready = c.Status == corev1.ConditionTrue
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		s.Restarts += cs.RestartCount
		if w := cs.State.Waiting; w != nil && s.Reason == "" {
			s.Reason = w.Reason
		}
	}
	if p.DeletionTimestamp != nil {
		s.Reason = "Terminating"
	}
	return s
}

func summarizeNode(n *corev1.Node) *NodeSummary {
	s := &NodeSummary{Unschedulable: n.Spec.Unschedulable}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			s.Ready = c.Status == corev1.ConditionTrue
		}
	}
	return s
}
