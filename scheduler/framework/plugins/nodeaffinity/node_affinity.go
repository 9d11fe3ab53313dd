// Package nodeaffinity sends pods only to nodes whose labels they select,
// and prefers the nodes they prefer.
//
// Seed: predicate PodSelectorMatches ("过滤掉和 pod 指定的 label 不匹配的节点"),
// section 三.2 (nodeSelector) and 三.3 (节点亲和性: 硬策略 required, 软策略
// preferred); seed 003's NodeAffinityPriority. Kubernetes plugin:
// NodeAffinity, which handles spec.nodeSelector and
// spec.affinity.nodeAffinity together.
//
// Filter rule (硬策略): a node fits when
//
//	every key: value of spec.nodeSelector is a label of the node, AND
//	requiredDuringSchedulingIgnoredDuringExecution, if set, has a
//	nodeSelectorTerm that matches: terms are ORed, the expressions inside
//	a term ANDed.
//
// Operators: In, NotIn (a node without the label matches NotIn), Exists,
// DoesNotExist, Gt, Lt (the label's value read as an integer); matchFields
// may name metadata.name with In or NotIn. A node that does not fit reads
// "node(s) didn't match Pod's node affinity/selector".
//
// Worked example (seed 三.3 pod1.yaml): node01 {myname: liliang}, node02
// {myname: scj}, node03 without the label; the pod requires
// {key: myname, operator: NotIn, values: [liliang, scj]}:
//
//	node01  liliang ∈ [liliang, scj]         → rejected
//	node02  scj ∈ [liliang, scj]             → rejected
//	node03  no myname label: NotIn holds     → fits
//
// Score rule (软策略, NodeAffinityPriority): a node scores the sum of the
// weights of the preferred terms it matches, then scores are scaled so the
// best node has 100:
//
//	raw(node)   = Σ weight of the preferredDuringScheduling terms the node matches
//	score(node) = 100 × raw(node) / max over feasible nodes of raw
//
// Worked example (seed 三.3 pod2.yaml): one preferred term, weight 1,
// kubernetes.io/hostname In [node03]. node03 raw 1, the others 0 → node03
// 100, the others 0; with this plugin's default weight 2 node03 gains 200
// over otherwise equal nodes, so "先满足硬策略，再去满足软策略": the
// preference only orders nodes the filter kept. The weights of several
// preferred terms add up: "权重越大，优先级越高".
//
// Where things live:
//
//	file              what it holds
//	node_affinity.go  the plugin: PreFilter and Filter on the required terms and nodeSelector, PreScore and Score on the preferred terms
//	node_selector.go  node selector terms parsed once: label and field requirements and whether a node matches them
package nodeaffinity

import (
	"github.com/mkube/mkube/scheduler/framework"
)

// Name is the plugin's name in kube-scheduler.
const Name = "NodeAffinity"

// ErrReasonPod is Kubernetes' reason string.
const ErrReasonPod = "node(s) didn't match Pod's node affinity/selector"

// Keys of this plugin's entries in the CycleState.
const (
	preFilterStateKey framework.StateKey = "PreFilter" + Name
	preScoreStateKey  framework.StateKey = "PreScore" + Name
)

// NodeAffinity is the plugin.
type NodeAffinity struct{}

// errStatus is the one rejection, shared (see framework.Status.WithPlugin).
// Labels change only by relabelling the node, so removing pods cannot help.
var errStatus = framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPod).WithPlugin(Name)

// The skips, shared, with the reason the explanation shows.
var (
	skipFilter = framework.NewStatus(framework.Skip, "the pod has no nodeSelector and no required node affinity")
	skipScore  = framework.NewStatus(framework.Skip, "the pod has no preferred node affinity")
)

// New returns the plugin.
func New() *NodeAffinity { return &NodeAffinity{} }

func (*NodeAffinity) Name() string { return Name }

// PreFilter parses the pod's nodeSelector and required terms once for the
// cycle; a pod that requires nothing skips the Filter.
func (*NodeAffinity) PreFilter(state *framework.CycleState, pod *framework.PodInfo, _ framework.NodeInfoLister) *framework.Status {
	r := newRequiredNodeAffinity(pod.Pod)
	if r.isEmpty() {
		return skipFilter
	}
	state.Write(preFilterStateKey, &r)
	return nil
}

// Filter accepts the nodes the pod's nodeSelector and required node
// affinity select. A plain nodeSelector is checked straight from the pod;
// only required affinity terms need what PreFilter parsed.
func (*NodeAffinity) Filter(state *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	if !matchesNodeSelector(pod.Pod.Spec.NodeSelector, node.Node()) {
		return errStatus
	}
	if !hasRequiredAffinity(pod.Pod) {
		return nil
	}
	r, err := framework.ReadAs[*requiredNodeAffinity](state, preFilterStateKey)
	if err != nil {
		// PreFilter did not run (a caller testing one node): parse here.
		nr := newRequiredNodeAffinity(pod.Pod)
		r = &nr
	}
	if !r.matchesAffinity(node.Node()) {
		return errStatus
	}
	return nil
}

// EventsToRegister: a new node, or a node whose labels changed.
func (*NodeAffinity) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}}
}

// PreScore parses the preferred terms; a pod without any skips the score
// (every node would score 0).
func (*NodeAffinity) PreScore(state *framework.CycleState, pod *framework.PodInfo, _ []*framework.NodeInfo, _ framework.NodeInfoLister) *framework.Status {
	terms := newPreferredTerms(pod.Pod)
	if len(terms) == 0 {
		return skipScore
	}
	state.Write(preScoreStateKey, terms)
	return nil
}

// Score is the sum of the weights of the preferred terms the node matches.
func (*NodeAffinity) Score(state *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) (int64, *framework.Status) {
	terms, err := framework.ReadAs[[]preferredTerm](state, preScoreStateKey)
	if err != nil {
		terms = newPreferredTerms(pod.Pod)
	}
	var sum int64
	for i := range terms {
		if terms[i].term.matches(node.Node()) {
			sum += terms[i].weight
		}
	}
	return sum, nil
}

// NormalizeScore scales the sums so that the best node scores 100.
func (*NodeAffinity) NormalizeScore(_ *framework.CycleState, _ *framework.PodInfo, scores []framework.NodeScore) *framework.Status {
	framework.DefaultNormalizeScore(false, scores)
	return nil
}
