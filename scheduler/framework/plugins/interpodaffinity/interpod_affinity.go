// Package interpodaffinity places pods near or away from other pods: pod
// affinity and anti-affinity (seed 000 section 三.3, "Pod 亲和性" and
// "Pod 反亲和性"). Kubernetes plugin: InterPodAffinity; old predicate
// MatchInterPodAffinity, old priority InterPodAffinityPriority.
//
// The unit is a topology domain: the nodes sharing one value of a node
// label, the term's topologyKey. With topologyKey kubernetes.io/hostname
// each node is its own domain; with topologyKey myname (seed) every node
// labelled myname=scj is one domain.
//
// Filter (required terms), filtering.go. A node fits when
//
//  1. affinity: for every required podAffinity term, the node's domain
//     already runs a pod the term selects (the selector, and the namespaces
//     or namespaceSelector). Exception: when no pod anywhere matches the
//     terms and the pod matches its own terms, it may go to any node with
//     the topology labels, so the first pod of a group that wants to be
//     together can start. Else "node(s) didn't match pod affinity rules".
//  2. anti-affinity: for every required podAntiAffinity term, the node's
//     domain runs no pod the term selects. Else "node(s) didn't match pod
//     anti-affinity rules".
//  3. symmetry: no pod already running has a required anti-affinity term
//     that selects this pod, in that pod's domain. Else "node(s) didn't
//     satisfy existing pods anti-affinity rules".
//
// Worked example (seed 三.3): node01 {myname: scj, myclass: a} runs
// myapp-demo {app: myapp-demo}; node02 {myname: tan, myclass: a}; node03
// {myname: scj, myclass: a}.
//
//	podAffinity, topologyKey myname, app In [myapp-demo]
//	  pods matching, counted per domain:  {myname=scj: 1}
//	  node01 (scj) 1 → fits; node03 (scj) 1 → fits, same domain as node01;
//	  node02 (tan) 0 → "node(s) didn't match pod affinity rules"
//	podAntiAffinity, topologyKey myclass, app In [myapp-demo]
//	  pods matching, counted per domain:  {myclass=a: 1}
//	  every node is in myclass=a → every node rejected:
//	  "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules." → Pending
//
// Score (preferred terms), scoring.go. Each node's domain collects points:
//
//	+weight  for each preferred podAffinity term of the pod, per pod in the domain it selects
//	-weight  for each preferred podAntiAffinity term of the pod, likewise
//	+weight / -weight  for each preferred (anti-)affinity term of a pod in the
//	         domain that selects this pod (symmetry), and +1 (hardPodAffinityWeight)
//	         for each of their required affinity terms that selects it
//	score(node) = 100 × (points(node) - min) / (max - min)   over the feasible nodes
//
// Cost: PreFilter and PreScore do the cluster-wide work once per cycle, as
// Kubernetes does, by counting matches per topology pair (key, value);
// Filter and Score then look up the node's own pairs, so nothing is
// O(pods × nodes). The counting visits, for the incoming pod's terms, only
// the pods each term may select, found through a per-node label index
// (candidates.go), and for the symmetric rules only the pods that have
// terms (the snapshot lists their nodes): a cycle is O(nodes + matching
// pods).
//
// Where things live:
//
//	file                     what it holds
//	interpod_affinity.go     the plugin, the events it registers for, and the merging of a term's namespaces and namespaceSelector
//	filtering.go             PreFilter and Filter: the required terms, both ways
//	scoring.go               PreScore and Score: the preferred terms, both ways
//	candidates.go            the per-node label index that finds the pods a term may select
//	prefilter_extensions.go  AddPod and RemovePod: keeping PreFilter's counts true while preemption takes pods off
package interpodaffinity

import (
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mkube/mkube/scheduler/framework"
)

// Name is the plugin's name in kube-scheduler.
const Name = "InterPodAffinity"

// hardPodAffinityWeight is kube-scheduler's default for the score a
// required affinity term of an existing pod gives the nodes in its domain
// when it selects the incoming pod (InterPodAffinityArgs).
const hardPodAffinityWeight = 1

// InterPodAffinity is the plugin.
type InterPodAffinity struct {
	handle framework.Handle
}

// New returns the plugin; h.Namespaces resolves namespaceSelector.
func New(h framework.Handle) *InterPodAffinity { return &InterPodAffinity{handle: h} }

func (*InterPodAffinity) Name() string { return Name }

// EventsToRegister: a pod bound, deleted or relabelled may satisfy a term
// or lift an anti-affinity; so may a new or relabelled node (its
// topology labels).
func (*InterPodAffinity) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{
		{Resource: framework.AssignedPod, ActionType: framework.Add | framework.Delete | framework.UpdatePodLabel},
		{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel},
	}
}

// mergeNamespaces returns terms with each namespaceSelector resolved into
// the names of the namespaces it selects now (Kubernetes'
// mergeAffinityTermNamespacesIfNotEmpty), so that matching the incoming
// pod's terms against thousands of pods needs no namespace lookups. The
// pod's PodInfo is shared with the queue and the cache: terms are copied
// before they change.
func (pl *InterPodAffinity) mergeNamespaces(terms []framework.AffinityTerm) []framework.AffinityTerm {
	out, copied := terms, false
	for i := range terms {
		if !needsMerge(terms[i].NamespaceSelector) {
			continue
		}
		if !copied {
			out, copied = append([]framework.AffinityTerm(nil), terms...), true
		}
		out[i] = pl.mergeTerm(terms[i])
	}
	return out
}

func (pl *InterPodAffinity) mergeWeightedNamespaces(terms []framework.WeightedAffinityTerm) []framework.WeightedAffinityTerm {
	out, copied := terms, false
	for i := range terms {
		if !needsMerge(terms[i].NamespaceSelector) {
			continue
		}
		if !copied {
			out, copied = append([]framework.WeightedAffinityTerm(nil), terms...), true
		}
		out[i].AffinityTerm = pl.mergeTerm(terms[i].AffinityTerm)
	}
	return out
}

// needsMerge: the selector selects some namespaces but not all. An empty
// selector ({}) selects every namespace and is kept as is; a missing one
// (labels.Nothing) selects none.
func needsMerge(sel labels.Selector) bool {
	_, selectable := sel.Requirements()
	return selectable && !sel.Empty()
}

func (pl *InterPodAffinity) mergeTerm(t framework.AffinityTerm) framework.AffinityTerm {
	ns := t.Namespaces.Clone()
	if pl.handle.Namespaces != nil {
		for _, n := range pl.handle.Namespaces.List(t.NamespaceSelector) {
			ns.Insert(n.Name)
		}
	}
	t.Namespaces, t.NamespaceSelector = ns, labels.Nothing()
	return t
}
