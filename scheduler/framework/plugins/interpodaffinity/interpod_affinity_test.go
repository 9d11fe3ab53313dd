package interpodaffinity

import (
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mkube/mkube/scheduler/cache"
	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// namespaces is a NamespaceLister over fixed namespaces, each labelled
// kubernetes.io/metadata.name=<name> as the API server labels them.
type namespaces map[string]map[string]string

func (n namespaces) Get(name string) (*corev1.Namespace, bool) {
	l, ok := n[name]
	if !ok {
		return nil, false
	}
	l = maps.Clone(l)
	if l == nil {
		l = map[string]string{}
	}
	l[corev1.LabelMetadataName] = name
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}, true
}

func (n namespaces) List(sel labels.Selector) []*corev1.Namespace {
	var out []*corev1.Namespace
	for _, name := range slices.Sorted(maps.Keys(n)) {
		ns, _ := n.Get(name)
		if sel.Matches(labels.Set(ns.Labels)) {
			out = append(out, ns)
		}
	}
	return out
}

var testNamespaces = namespaces{"default": nil, "prod": {"env": "prod"}, "dev": {"env": "dev"}}

// seedNodes are the nodes of the seed's pod affinity examples: myname
// splits them into two domains, myclass puts them all in one.
func seedNodes() []*st.NodeWrapper {
	return []*st.NodeWrapper{
		st.MakeNode("node01").Label("myname", "scj").Label("myclass", "a"),
		st.MakeNode("node02").Label("myname", "tan").Label("myclass", "a"),
		st.MakeNode("node03").Label("myname", "scj").Label("myclass", "a"),
	}
}

// snapshot puts pods (each with spec.nodeName set) on their nodes.
func snapshot(nodes []*st.NodeWrapper, pods ...*corev1.Pod) *cache.Snapshot {
	var infos []*framework.NodeInfo
	for _, n := range nodes {
		var on []*corev1.Pod
		for _, p := range pods {
			if p.Spec.NodeName == n.Name {
				on = append(on, p)
			}
		}
		infos = append(infos, st.NodeInfo(n.Obj(), on...))
	}
	return cache.NewSnapshot(infos...)
}

// filterAll runs PreFilter, then Filter on every node, and returns
// "node01: fits; node02: <reason>; ..." or "skip".
func filterAll(pod *corev1.Pod, snap *cache.Snapshot) string {
	pl, state, pi := New(framework.Handle{Namespaces: testNamespaces}), framework.NewCycleState(), framework.NewPodInfo(pod)
	s := pl.PreFilter(state, pi, snap)
	if s.Code() == framework.Skip {
		return "skip"
	}
	if !s.IsSuccess() {
		return "prefilter: " + s.Message()
	}
	var out []string
	for _, n := range snap.List() {
		verdict := "fits"
		if s := pl.Filter(state, pi, n); !s.IsSuccess() {
			verdict = s.Message()
		}
		out = append(out, n.Node().Name+": "+verdict)
	}
	return strings.Join(out, "; ")
}

func TestInterPodAffinityFilter(t *testing.T) {
	appDemo := st.Selector("app", metav1.LabelSelectorOpIn, "myapp-demo")
	demoOn := func(node string) *corev1.Pod {
		return st.MakePod("myapp-demo").Label("app", "myapp-demo").NodeName(node).Obj()
	}
	const (
		affinity = ErrReasonAffinityRulesNotMatch
		anti     = ErrReasonAntiAffinityRulesNotMatch
		existing = ErrReasonExistingAntiAffinityRulesNotMatch
	)
	tests := []struct {
		name string
		pod  *corev1.Pod
		snap *cache.Snapshot
		want string
	}{
		{"seed 三.3 pod affinity on topologyKey myname: the pod goes to the domain myname=scj of myapp-demo, node03 included",
			st.MakePod("myapp-demo7").Label("run", "myapp-demo4").PodAffinity("myname", appDemo, "default").Obj(),
			snapshot(seedNodes(), demoOn("node01")),
			"node01: fits; node02: " + affinity + "; node03: fits"},
		{"seed 三.3 pod anti-affinity on topologyKey myclass: every node is in myapp-demo's domain, so none fits",
			st.MakePod("myapp-demo8").Label("run", "myapp-demo4").PodAntiAffinity("myclass", appDemo, "default").Obj(),
			snapshot(seedNodes(), demoOn("node02")),
			"node01: " + anti + "; node02: " + anti + "; node03: " + anti},
		{"anti-affinity on kubernetes.io/hostname keeps the pod off the one node running the other",
			st.MakePod("p").PodAntiAffinity(corev1.LabelHostname, appDemo).Obj(),
			snapshot(seedNodes(), demoOn("node02")),
			"node01: fits; node02: " + anti + "; node03: fits"},
		{"the first pod of a group affine to itself may go anywhere the topology label exists",
			st.MakePod("web-0").Label("app", "web").PodAffinity("myname", st.Selector("app", metav1.LabelSelectorOpIn, "web")).Obj(),
			snapshot(append(seedNodes(), st.MakeNode("node04"))),
			"node01: fits; node02: fits; node03: fits; node04: " + affinity},
		{"a pod whose affinity nothing matches, and which does not match itself, fits nowhere",
			st.MakePod("p").PodAffinity("myname", appDemo).Obj(),
			snapshot(seedNodes()),
			"node01: " + affinity + "; node02: " + affinity + "; node03: " + affinity},
		{"once a pod of the group runs, the exception no longer applies: the next one joins its domain",
			st.MakePod("web-1").Label("app", "web").PodAffinity("myname", st.Selector("app", metav1.LabelSelectorOpIn, "web")).Obj(),
			snapshot(seedNodes(), st.MakePod("web-0").Label("app", "web").NodeName("node02").Obj()),
			"node01: " + affinity + "; node02: fits; node03: " + affinity},
		{"a term names its namespaces: a matching pod in another namespace does not count",
			st.MakePod("p").PodAffinity("myname", appDemo, "prod").Obj(),
			snapshot(seedNodes(), demoOn("node01")),
			"node01: " + affinity + "; node02: " + affinity + "; node03: " + affinity},
		{"without namespaces, a term means the pod's own namespace",
			st.MakePod("p").Namespace("prod").PodAffinity("myname", appDemo).Obj(),
			snapshot(seedNodes(), demoOn("node01")),
			"node01: " + affinity + "; node02: " + affinity + "; node03: " + affinity},
		{"a namespaceSelector selects namespaces by their labels",
			st.MakePod("p").PodAffinityTerm(st.RequiredAffinity, 0, corev1.PodAffinityTerm{TopologyKey: "myname", LabelSelector: appDemo,
				NamespaceSelector: st.Selector("env", metav1.LabelSelectorOpIn, "prod")}).Obj(),
			snapshot(seedNodes(), st.MakePod("myapp-demo").Namespace("prod").Label("app", "myapp-demo").NodeName("node02").Obj()),
			"node01: " + affinity + "; node02: fits; node03: " + affinity},
		{"a namespaceSelector on kubernetes.io/metadata.name, which the API server sets on every namespace",
			st.MakePod("p").PodAffinityTerm(st.RequiredAffinity, 0, corev1.PodAffinityTerm{TopologyKey: "myname", LabelSelector: appDemo,
				NamespaceSelector: st.Selector(corev1.LabelMetadataName, metav1.LabelSelectorOpIn, "dev")}).Obj(),
			snapshot(seedNodes(), st.MakePod("myapp-demo").Namespace("dev").Label("app", "myapp-demo").NodeName("node02").Obj()),
			"node01: " + affinity + "; node02: fits; node03: " + affinity},
		{"an empty namespaceSelector selects every namespace",
			st.MakePod("p").PodAffinityTerm(st.RequiredAffinity, 0, corev1.PodAffinityTerm{TopologyKey: "myname", LabelSelector: appDemo,
				NamespaceSelector: &metav1.LabelSelector{}}).Obj(),
			snapshot(seedNodes(), st.MakePod("myapp-demo").Namespace("dev").Label("app", "myapp-demo").NodeName("node02").Obj()),
			"node01: " + affinity + "; node02: fits; node03: " + affinity},
		{"an existing pod's required anti-affinity repels the incoming pod from its domain (symmetry)",
			st.MakePod("web-1").Label("app", "web").Obj(),
			snapshot(seedNodes(), st.MakePod("db").PodAntiAffinity("myname", st.Selector("app", metav1.LabelSelectorOpIn, "web")).NodeName("node03").Obj()),
			"node01: " + existing + "; node02: fits; node03: " + existing},
		{"an existing pod's anti-affinity with a namespaceSelector reads the incoming pod's namespace labels",
			st.MakePod("web-1").Namespace("prod").Label("app", "web").Obj(),
			snapshot(seedNodes(), st.MakePod("db").PodAffinityTerm(st.RequiredAntiAffinity, 0, corev1.PodAffinityTerm{TopologyKey: "myname",
				LabelSelector: st.Selector("app", metav1.LabelSelectorOpIn, "web"), NamespaceSelector: st.Selector("env", metav1.LabelSelectorOpIn, "prod")}).NodeName("node02").Obj()),
			"node01: fits; node02: " + existing + "; node03: fits"},
		{"an existing pod's anti-affinity that does not select the incoming pod leaves nothing to filter",
			st.MakePod("web-1").Label("app", "api").Obj(),
			snapshot(seedNodes(), st.MakePod("db").PodAntiAffinity("myname", st.Selector("app", metav1.LabelSelectorOpIn, "web")).NodeName("node03").Obj()),
			"skip"},
		{"with several affinity terms, one pod must match them all",
			st.MakePod("p").PodAffinity("myname", appDemo).PodAffinity("myclass", st.Selector("tier", metav1.LabelSelectorOpIn, "front")).Obj(),
			snapshot(seedNodes(), demoOn("node01"), st.MakePod("front").Label("tier", "front").NodeName("node02").Obj()),
			"node01: " + affinity + "; node02: " + affinity + "; node03: " + affinity},
		{"anti-affinity does not reach a node without the topology label",
			st.MakePod("p").PodAntiAffinity("myclass", appDemo).Obj(),
			snapshot(append(seedNodes(), st.MakeNode("node04")), demoOn("node01")),
			"node01: " + anti + "; node02: " + anti + "; node03: " + anti + "; node04: fits"},
		{"a NotIn selector, which the label index cannot serve, looks at every pod",
			st.MakePod("p").PodAntiAffinity("myname", st.Selector("app", metav1.LabelSelectorOpNotIn, "web")).Obj(),
			snapshot(seedNodes(), demoOn("node02")),
			"node01: fits; node02: " + anti + "; node03: fits"},
		{"matchLabels (app = myapp-demo) is served by the label index like In",
			st.MakePod("p").PodAffinityTerm(st.RequiredAntiAffinity, 0, corev1.PodAffinityTerm{TopologyKey: "myname",
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "myapp-demo"}}}).Obj(),
			snapshot(seedNodes(), demoOn("node01")),
			"node01: " + anti + "; node02: fits; node03: " + anti},
		{"an In over several values finds the pods with any of them",
			st.MakePod("p").PodAntiAffinity(corev1.LabelHostname, st.Selector("app", metav1.LabelSelectorOpIn, "cache", "myapp-demo")).Obj(),
			snapshot(seedNodes(), demoOn("node01"), st.MakePod("c").Label("app", "cache").NodeName("node03").Obj()),
			"node01: " + anti + "; node02: fits; node03: " + anti},
		{"affinity terms without In use another term's candidates, and a pod must still match them all",
			st.MakePod("p").PodAffinity("myname", st.Selector("tier", metav1.LabelSelectorOpExists)).PodAffinity("myname", appDemo).Obj(),
			snapshot(seedNodes(), st.MakePod("a").Label("app", "myapp-demo").Label("tier", "front").NodeName("node02").Obj(), demoOn("node01")),
			"node01: " + affinity + "; node02: fits; node03: " + affinity},
		{"a nil labelSelector selects no pod",
			st.MakePod("p").PodAntiAffinity("myname", nil).Obj(),
			snapshot(seedNodes(), demoOn("node01")),
			"node01: fits; node02: fits; node03: fits"},
		{"a pod without terms in a cluster without anti-affinity skips the filter",
			st.MakePod("p").Label("app", "web").Obj(), snapshot(seedNodes(), demoOn("node01")), "skip"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := filterAll(tt.pod, tt.snap); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestAnAffinityRejectionIsUnresolvableAndAnAntiAffinityOneIsNot(t *testing.T) {
	snap := snapshot(seedNodes(), st.MakePod("x").Label("app", "x").NodeName("node01").Obj())
	sel := st.Selector("app", metav1.LabelSelectorOpIn, "x")
	for _, tc := range []struct {
		pod  *corev1.Pod
		node int
		want framework.Code
	}{
		{st.MakePod("p").PodAffinity(corev1.LabelHostname, sel).Obj(), 1, framework.UnschedulableAndUnresolvable},
		{st.MakePod("p").PodAntiAffinity(corev1.LabelHostname, sel).Obj(), 0, framework.Unschedulable},
	} {
		pl, state, pi := New(framework.Handle{}), framework.NewCycleState(), framework.NewPodInfo(tc.pod)
		pl.PreFilter(state, pi, snap)
		if got := pl.Filter(state, pi, snap.List()[tc.node]).Code(); got != tc.want {
			t.Errorf("%s: code %v, want %v", pi.Key, got, tc.want)
		}
	}
}

func TestAPodWithAnUnparsableSelectorFitsNowhere(t *testing.T) {
	bad := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}
	got := filterAll(st.MakePod("p").PodAntiAffinity("myname", bad).Obj(), snapshot(seedNodes()))
	if !strings.HasPrefix(got, "prefilter: invalid pod affinity") {
		t.Errorf("got %s", got)
	}
}

// scoreAll runs PreScore, Score and NormalizeScore on every node.
func scoreAll(pod *corev1.Pod, snap *cache.Snapshot) (map[string]int64, bool) {
	pl, state, pi := New(framework.Handle{Namespaces: testNamespaces}), framework.NewCycleState(), framework.NewPodInfo(pod)
	if s := pl.PreScore(state, pi, snap.List(), snap); s.Code() == framework.Skip {
		return nil, true
	}
	var scores []framework.NodeScore
	for _, n := range snap.List() {
		s, _ := pl.Score(state, pi, n)
		scores = append(scores, framework.NodeScore{Name: n.Node().Name, Score: s})
	}
	pl.NormalizeScore(state, pi, scores)
	out := map[string]int64{}
	for _, s := range scores {
		out[s.Name] = s.Score
	}
	return out, false
}

func TestInterPodAffinityScore(t *testing.T) {
	cacheSel := st.Selector("app", metav1.LabelSelectorOpIn, "cache")
	web := st.Selector("app", metav1.LabelSelectorOpIn, "web")
	cacheOn := func(node string) *corev1.Pod {
		return st.MakePod("cache-"+node).Label("app", "cache").NodeName(node).Obj()
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		snap *cache.Snapshot
		want map[string]int64 // nil = skipped
	}{
		{"a preferred affinity to cache pods on the same myname domain gives that domain 100",
			st.MakePod("web").PodAffinityTerm(st.PreferredAffinity, 10, corev1.PodAffinityTerm{TopologyKey: "myname", LabelSelector: cacheSel}).Obj(),
			snapshot(seedNodes(), cacheOn("node02")), map[string]int64{"node01": 0, "node02": 100, "node03": 0}},
		{"a preferred anti-affinity gives the domain with the pod 0 and the others 100",
			st.MakePod("web").PodAffinityTerm(st.PreferredAntiAffinity, 10, corev1.PodAffinityTerm{TopologyKey: "myname", LabelSelector: cacheSel}).Obj(),
			snapshot(seedNodes(), cacheOn("node01")), map[string]int64{"node01": 0, "node02": 100, "node03": 0}},
		{"points are per matching pod: two cache pods in one domain outweigh one in the other",
			st.MakePod("web").PodAffinityTerm(st.PreferredAffinity, 10, corev1.PodAffinityTerm{TopologyKey: corev1.LabelHostname, LabelSelector: cacheSel}).Obj(),
			snapshot(seedNodes(), cacheOn("node01"), st.MakePod("c2").Label("app", "cache").NodeName("node01").Obj(), cacheOn("node03")),
			map[string]int64{"node01": 100, "node02": 0, "node03": 50}},
		{"affinity and anti-affinity points are min-max normalised: -5, 0, 15 become 0, 25, 100",
			st.MakePod("web").
				PodAffinityTerm(st.PreferredAntiAffinity, 5, corev1.PodAffinityTerm{TopologyKey: corev1.LabelHostname, LabelSelector: cacheSel}).
				PodAffinityTerm(st.PreferredAffinity, 15, corev1.PodAffinityTerm{TopologyKey: corev1.LabelHostname, LabelSelector: web}).Obj(),
			snapshot(seedNodes(), cacheOn("node01"), st.MakePod("w").Label("app", "web").NodeName("node03").Obj()),
			map[string]int64{"node01": 0, "node02": 25, "node03": 100}},
		{"symmetry: an existing pod's preferred affinity for web pods draws a web pod without terms",
			st.MakePod("web").Label("app", "web").Obj(),
			snapshot(seedNodes(), st.MakePod("cache").PodAffinityTerm(st.PreferredAffinity, 7, corev1.PodAffinityTerm{TopologyKey: "myname", LabelSelector: web}).NodeName("node02").Obj()),
			map[string]int64{"node01": 0, "node02": 100, "node03": 0}},
		{"symmetry: an existing pod's preferred anti-affinity pushes the pod away",
			st.MakePod("web").Label("app", "web").Obj(),
			snapshot(seedNodes(), st.MakePod("cache").PodAffinityTerm(st.PreferredAntiAffinity, 7, corev1.PodAffinityTerm{TopologyKey: "myname", LabelSelector: web}).NodeName("node02").Obj()),
			map[string]int64{"node01": 100, "node02": 0, "node03": 100}},
		{"symmetry: an existing pod's required affinity selecting the pod counts hardPodAffinityWeight",
			st.MakePod("web").Label("app", "web").Obj(),
			snapshot(seedNodes(), st.MakePod("cache").PodAffinity("myname", web).NodeName("node01").Obj()),
			map[string]int64{"node01": 100, "node02": 0, "node03": 100}},
		{"no terms anywhere: the plugin skips",
			st.MakePod("web").Label("app", "web").Obj(), snapshot(seedNodes(), cacheOn("node01")), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, skipped := scoreAll(tt.pod, tt.snap)
			if skipped != (tt.want == nil) {
				t.Fatalf("skipped = %v, want %v", skipped, tt.want == nil)
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
