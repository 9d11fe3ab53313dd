package podtopologyspread

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/mkube/mkube/scheduler/framework"
	"github.com/mkube/mkube/scheduler/framework/plugins/tainttoleration"
)

// constraint is one topologySpreadConstraint, parsed once per cycle
// (Kubernetes' topologySpreadConstraint), with its defaults applied:
// minDomains 1, nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore.
type constraint struct {
	maxSkew           int32
	topologyKey       string
	selector          labels.Selector // matchLabelKeys merged in
	minDomains        int32
	honorNodeAffinity bool
	honorNodeTaints   bool
	// indexKey and indexValues: the selector requires indexKey In
	// (indexValues), so only pods with one of those labels can match and
	// the node's label index lists them (NodeInfo.PodsWithLabel). "" when
	// the selector has no such requirement: every pod is looked at.
	indexKey    string
	indexValues []string
}

// systemDefaultConstraints are kube-scheduler's defaults for a pod without
// constraints of its own (PodTopologySpreadArgs defaultingType: System).
// Both only score, so a pod without constraints is never filtered.
var systemDefaultConstraints = []corev1.TopologySpreadConstraint{
	{TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway, MaxSkew: 3},
	{TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.ScheduleAnyway, MaxSkew: 5},
}

// constraintsOf returns the pod's constraints of one kind (DoNotSchedule
// for Filter, ScheduleAnyway for Score). A pod with constraints of its
// own gets only those; a pod without gets the system defaults, selecting
// what defaultSelector says, or none if that selects nothing.
func (pl *PodTopologySpread) constraintsOf(pod *corev1.Pod, action corev1.UnsatisfiableConstraintAction) ([]constraint, error) {
	own := pod.Spec.TopologySpreadConstraints
	if len(own) > 0 {
		var out []constraint
		for i := range own {
			if own[i].WhenUnsatisfiable != action {
				continue
			}
			c, err := newConstraint(&own[i], pod.Labels)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	}
	if action != corev1.ScheduleAnyway {
		return nil, nil // every default is ScheduleAnyway: nothing to look up
	}
	sel := pl.defaultSelector(pod)
	if sel.Empty() {
		return nil, nil
	}
	out := make([]constraint, len(systemDefaultConstraints))
	for i := range systemDefaultConstraints {
		out[i], _ = newConstraint(&systemDefaultConstraints[i], nil) // no selector: nothing to fail
		out[i].setSelector(sel)
	}
	return out, nil
}

func newConstraint(c *corev1.TopologySpreadConstraint, podLabels map[string]string) (constraint, error) {
	out := constraint{
		maxSkew: c.MaxSkew, topologyKey: c.TopologyKey, minDomains: 1,
		honorNodeAffinity: c.NodeAffinityPolicy == nil || *c.NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor,
		honorNodeTaints:   c.NodeTaintsPolicy != nil && *c.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor,
	}
	if c.MinDomains != nil {
		out.minDomains = *c.MinDomains
	}
	sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector) // nil: labels.Nothing()
	if err != nil {
		return constraint{}, fmt.Errorf("topology spread constraint %s: %w", c.TopologyKey, err)
	}
	// matchLabelKeys: the pod's own value of each key, ANDed in.
	if reqs, selectable := sel.Requirements(); selectable && len(c.MatchLabelKeys) > 0 {
		own := labels.Set{}
		for _, k := range c.MatchLabelKeys {
			if v, ok := podLabels[k]; ok {
				own[k] = v
			}
		}
		if len(own) > 0 {
			sel = labels.SelectorFromSet(own).Add(reqs...)
		}
	}
	out.setSelector(sel)
	return out, nil
}

// setSelector sets the selector and what of it the label index can serve.
func (c *constraint) setSelector(sel labels.Selector) {
	c.selector, c.indexKey, c.indexValues = sel, "", nil
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		switch r.Operator() {
		case selection.In, selection.Equals, selection.DoubleEquals:
			c.indexKey, c.indexValues = r.Key(), r.ValuesUnsorted()
			return
		}
	}
}

// countOn counts the pods on node n, in namespace and not being deleted,
// that the selector selects. Through the label index this is O(matching
// pods) for the usual selector (app=web), not O(pods on the node).
// Kubernetes counts no pod for an empty selector ({}), though the pod
// itself matches it.
func (c *constraint) countOn(n *framework.NodeInfo, namespace string) int {
	if c.selector.Empty() {
		return 0
	}
	count := 0
	countOf := func(pods []*framework.PodInfo) {
		for _, p := range pods {
			if p.Pod.Namespace == namespace && p.Pod.DeletionTimestamp == nil && c.selector.Matches(labels.Set(p.Pod.Labels)) {
				count++
			}
		}
	}
	if c.indexKey == "" {
		countOf(n.Pods)
		return count
	}
	for _, v := range c.indexValues { // a pod has one value per key: none is counted twice
		countOf(n.PodsWithLabel(c.indexKey, v))
	}
	return count
}

// nodeInclusion decides which nodes' pods count (nodeAffinityPolicy,
// nodeTaintsPolicy): the incoming pod's required node affinity (with its
// nodeSelector) and tolerations, checked only if a constraint honors them.
type nodeInclusion struct {
	affinity                 nodeaffinity.RequiredNodeAffinity
	tolerations              []corev1.Toleration
	needAffinity, needTaints bool
}

func newNodeInclusion(pod *corev1.Pod, cs []constraint) nodeInclusion {
	in := nodeInclusion{affinity: nodeaffinity.GetRequiredNodeAffinity(pod), tolerations: pod.Spec.Tolerations}
	for i := range cs {
		in.needAffinity = in.needAffinity || cs[i].honorNodeAffinity
		in.needTaints = in.needTaints || cs[i].honorNodeTaints
	}
	return in
}

// check reports whether node matches the pod's node affinity and
// tolerates its NoSchedule and NoExecute taints (what the NodeAffinity and
// TaintToleration filters ask), as far as some constraint honors them.
func (in *nodeInclusion) check(node *corev1.Node) (matchesAffinity, toleratesTaints bool) {
	matchesAffinity, toleratesTaints = true, true
	if in.needAffinity {
		matchesAffinity, _ = in.affinity.Match(node) // a bad term matches no node, as in Kubernetes
	}
	if in.needTaints {
		for i := range node.Spec.Taints {
			t := &node.Spec.Taints[i]
			if (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) &&
				!tainttoleration.TolerationsTolerateTaint(in.tolerations, t) {
				toleratesTaints = false
				break
			}
		}
	}
	return matchesAffinity, toleratesTaints
}

// includes applies the constraint's policies to check's answers.
func (c *constraint) includes(matchesAffinity, toleratesTaints bool) bool {
	return (!c.honorNodeAffinity || matchesAffinity) && (!c.honorNodeTaints || toleratesTaints)
}

// The controllers whose selector the default constraints spread.
// StatefulSets too in Kubernetes; mkube serves none.
var (
	replicaSetKind            = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	replicationControllerKind = corev1.SchemeGroupVersion.WithKind("ReplicationController")
)

// defaultSelector is what the system default constraints count
// (Kubernetes' helper.DefaultSelector): the pods that every Service
// selecting the pod selects, and that its controlling ReplicaSet or
// ReplicationController selects. Empty (nothing to spread) for a pod with
// neither, such as a bare pod: most pods of a big cluster skip here.
func (pl *PodTopologySpread) defaultSelector(pod *corev1.Pod) labels.Selector {
	sel := labels.NewSelector()
	for _, svc := range pl.handle.ServicesSelecting(pod) {
		reqs, _ := svc.Requirements()
		sel = sel.Add(reqs...)
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return sel
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return sel
	}
	var own labels.Selector
	switch gv.WithKind(ref.Kind) {
	case replicaSetKind:
		if pl.handle.ReplicaSets != nil {
			if rs, ok := pl.handle.ReplicaSets.Get(pod.Namespace, ref.Name); ok {
				own, _ = metav1.LabelSelectorAsSelector(rs.Spec.Selector) // nil if it does not parse
			}
		}
	case replicationControllerKind:
		if pl.handle.ReplicationControllers != nil {
			if rc, ok := pl.handle.ReplicationControllers.Get(pod.Namespace, ref.Name); ok {
				own = labels.SelectorFromSet(rc.Spec.Selector)
			}
		}
	}
	if own != nil {
		if reqs, selectable := own.Requirements(); selectable {
			sel = sel.Add(reqs...)
		}
	}
	return sel
}
