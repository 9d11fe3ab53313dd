package daemon

import (
	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// placement decides, node by node, where a DaemonSet's pod belongs: the
// rule of Kubernetes' NodeShouldRunDaemonPod, built once per sync from the
// pod template because every node is checked against the same template.
//
// A node fits when
//
//	the template names no node, or names this one (spec.nodeName), AND
//	its labels match spec.nodeSelector and the required node affinity, AND
//	every NoSchedule and NoExecute taint is tolerated, the template's
//	tolerations plus the defaults every daemon pod gets (daemonTolerations).
//
// The controller only decides; the scheduler places the pod it creates
// (nodeAffinity matchFields metadata.name=<node>, see forNode), checking
// the same filters plus the node's free resources.
type placement struct {
	nodeName    string
	affinity    nodeaffinity.RequiredNodeAffinity
	tolerations []corev1.Toleration
}

func placementOf(ds *appsv1.DaemonSet) placement {
	spec := &ds.Spec.Template.Spec
	return placement{nodeName: spec.NodeName, affinity: nodeaffinity.NewRequiredNodeAffinity(spec.NodeSelector, spec.Affinity),
		tolerations: daemonTolerations(spec)}
}

// check answers two questions about node:
//
//   - shouldRun: a daemon pod should be created there if none runs;
//   - shouldContinueRunning: a daemon pod already there may stay.
//
// They differ only for a node with an untolerated NoSchedule taint (and
// no untolerated NoExecute one): no new pod goes there, but the one
// running is not evicted, as the taints themselves mean.
func (p placement) check(node *corev1.Node) (shouldRun, shouldContinueRunning bool) {
	if p.nodeName != "" && p.nodeName != node.Name {
		return false, false
	}
	// A term that does not parse matches no node; validation keeps them out.
	if fits, _ := p.affinity.Match(node); !fits {
		return false, false
	}
	if !p.untolerated(node, corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute) {
		return true, true
	}
	return false, !p.untolerated(node, corev1.TaintEffectNoExecute)
}

// untolerated reports whether node has a taint of one of the effects that
// the daemon pods do not tolerate. The alpha comparison operators of
// tolerations (TaintTolerationComparisonOperators) are off, as in 1.37.
func (p placement) untolerated(node *corev1.Node, effects ...corev1.TaintEffect) bool {
	_, found := v1helper.FindMatchingUntoleratedTaint(logr.Discard(), node.Spec.Taints, p.tolerations, func(t *corev1.Taint) bool {
		for _, e := range effects {
			if t.Effect == e {
				return true
			}
		}
		return false
	}, false)
	return found
}
