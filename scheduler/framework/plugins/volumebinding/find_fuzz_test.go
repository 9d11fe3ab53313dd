package volumebinding

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A class's allowedTopologies, from "key=v1,v2;key2=v3" (one term), admit
// a node that has, for every key, one of its values, and no node that
// lacks one of the keys.
func FuzzMatchTopology(f *testing.F) {
	f.Add("topology.kubernetes.io/zone=a,b", "a")
	f.Add("zone=a;rack=r1,r2", "r2")
	f.Fuzz(func(t *testing.T, term, pick string) {
		var reqs []corev1.TopologySelectorLabelRequirement
		for _, part := range strings.Split(term, ";") {
			key, values, ok := strings.Cut(part, "=")
			if !ok || key == "" {
				return
			}
			reqs = append(reqs, corev1.TopologySelectorLabelRequirement{Key: key, Values: strings.Split(values, ",")})
		}
		terms := []corev1.TopologySelectorTerm{{MatchLabelExpressions: reqs}}
		node := map[string]string{}
		for _, r := range reqs {
			v := r.Values[0]
			for _, x := range r.Values {
				if x == pick {
					v = pick
				}
			}
			if have, ok := node[r.Key]; ok && have != v {
				return // the same key twice with other values: not this property's case
			}
			node[r.Key] = v
		}
		if !matchTopology(terms, node) {
			t.Errorf("%v does not admit %v", terms, node)
		}
		delete(node, reqs[0].Key)
		if matchTopology(terms, node) {
			t.Errorf("%v admits %v, which lacks %s", terms, node, reqs[0].Key)
		}
		if !matchTopology(nil, node) {
			t.Error("no allowedTopologies must admit every node")
		}
	})
}
