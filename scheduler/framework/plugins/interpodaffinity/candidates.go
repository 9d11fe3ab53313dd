package interpodaffinity

import (
	"k8s.io/apimachinery/pkg/selection"

	"github.com/mkube/mkube/scheduler/framework"
)

// candidates finds, on one node, the pods a term may select, without
// testing every pod: if the term's label selector requires key In (v1,
// v2...) (or key = v), only the pods labelled key=v1, key=v2... can match,
// and the node's label index lists them (framework.NodeInfo.PodsWithLabel).
// A term with no such requirement (only NotIn, Exists...) falls back to
// every pod of the node. Either way each candidate is then tested against
// the whole term; the index only spares looking at pods that cannot match.
//
// This is what makes a cycle O(nodes + matching pods) rather than
// O(pods) for the common terms; Kubernetes tests every pod, in 16
// goroutines.
type candidates struct {
	nothing bool     // a nil labelSelector: the term selects no pod at all
	key     string   // "" if the selector has no In or = requirement
	values  []string // the values of key that may match
}

func newCandidates(t *framework.AffinityTerm) candidates {
	reqs, selectable := t.Selector.Requirements()
	if !selectable {
		return candidates{nothing: true}
	}
	for _, r := range reqs {
		switch r.Operator() {
		case selection.In, selection.Equals, selection.DoubleEquals:
			return candidates{key: r.Key(), values: r.ValuesUnsorted()}
		}
	}
	return candidates{}
}

func newCandidatesOf(terms []framework.AffinityTerm) []candidates {
	out := make([]candidates, len(terms))
	for i := range terms {
		out[i] = newCandidates(&terms[i])
	}
	return out
}

// visit calls fn for each candidate pod on node n.
func (c candidates) visit(n *framework.NodeInfo, fn func(*framework.PodInfo)) {
	switch {
	case c.nothing:
	case c.key == "":
		for _, p := range n.Pods {
			fn(p)
		}
	default:
		for _, v := range c.values {
			for _, p := range n.PodsWithLabel(c.key, v) {
				fn(p)
			}
		}
	}
}
