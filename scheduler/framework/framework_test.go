package framework_test

import (
	"strings"
	"testing"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// fake is a plugin at every extension point, counting its calls.
type fake struct {
	name            string
	skipPreFilter   bool
	skipPreScore    bool
	raw             map[string]int64 // Score per node
	filterCalls     int
	normalizeCalled bool
}

func (f *fake) Name() string { return f.name }
func (f *fake) PreFilter(*framework.CycleState, *framework.PodInfo, framework.NodeInfoLister) *framework.Status {
	if f.skipPreFilter {
		return framework.NewStatus(framework.Skip, "nothing to check")
	}
	return nil
}
func (f *fake) Filter(*framework.CycleState, *framework.PodInfo, *framework.NodeInfo) *framework.Status {
	f.filterCalls++
	return nil
}
func (f *fake) PreScore(*framework.CycleState, *framework.PodInfo, []*framework.NodeInfo, framework.NodeInfoLister) *framework.Status {
	if f.skipPreScore {
		return framework.NewStatus(framework.Skip, "nothing to compare")
	}
	return nil
}
func (f *fake) Score(_ *framework.CycleState, _ *framework.PodInfo, n *framework.NodeInfo) (int64, *framework.Status) {
	return f.raw[n.Node().Name], nil
}
func (f *fake) NormalizeScore(_ *framework.CycleState, _ *framework.PodInfo, scores []framework.NodeScore) *framework.Status {
	f.normalizeCalled = true
	framework.DefaultNormalizeScore(false, scores)
	return nil
}

func nodes(names ...string) []*framework.NodeInfo {
	var out []*framework.NodeInfo
	for _, n := range names {
		out = append(out, st.NodeInfo(st.MakeNode(n).Obj()))
	}
	return out
}

func TestAPreFilterSkipMeansItsFilterIsNotCalled(t *testing.T) {
	skipping, checking := &fake{name: "A", skipPreFilter: true}, &fake{name: "B"}
	fwk, _ := framework.New(framework.PluginSpec{Plugin: skipping}, framework.PluginSpec{Plugin: checking})
	state, pod := framework.NewCycleState(), framework.NewPodInfo(st.MakePod("p").Obj())
	if s := fwk.RunPreFilterPlugins(state, pod, nil); !s.IsSuccess() {
		t.Fatal(s.Message())
	}
	for _, n := range nodes("n1", "n2") {
		fwk.RunFilterPlugins(state, pod, n)
	}
	if skipping.filterCalls != 0 || checking.filterCalls != 2 {
		t.Errorf("filter calls: skipped plugin %d, other %d", skipping.filterCalls, checking.filterCalls)
	}
	if got := state.SkippedFilters(); len(got) != 1 || got[0] != (framework.SkippedPlugin{Name: "A", Reason: "nothing to check"}) {
		t.Errorf("skipped filters = %v", got)
	}
}

func TestScoresAreNormalisedThenWeighted(t *testing.T) {
	a := &fake{name: "A", raw: map[string]int64{"n1": 2, "n2": 4}} // normalised 50, 100
	b := &fake{name: "B", raw: map[string]int64{"n1": 7, "n2": 0}} // normalised 100, 0
	skipped := &fake{name: "C", skipPreScore: true}
	fwk, _ := framework.New(framework.PluginSpec{Plugin: a, Weight: 3}, framework.PluginSpec{Plugin: b, Weight: 2}, framework.PluginSpec{Plugin: skipped, Weight: 5})
	state, pod, ns := framework.NewCycleState(), framework.NewPodInfo(st.MakePod("p").Obj()), nodes("n1", "n2")
	if s := fwk.RunPreScorePlugins(state, pod, ns, nil); !s.IsSuccess() {
		t.Fatal(s.Message())
	}
	plugins, scores, s := fwk.RunScorePlugins(state, pod, ns)
	if !s.IsSuccess() {
		t.Fatal(s.Message())
	}
	if len(plugins) != 2 || plugins[0] != (framework.PluginWeight{Name: "A", Weight: 3}) || plugins[1].Name != "B" {
		t.Errorf("plugins = %v: the skipped plugin should be absent", plugins)
	}
	// n1: 50×3 + 100×2 = 350; n2: 100×3 + 0×2 = 300.
	if scores[0].TotalScore != 350 || scores[1].TotalScore != 300 || scores[0].Scores[0] != 50 || scores[0].Scores[1] != 100 {
		t.Errorf("scores = %+v", scores)
	}
	if !a.normalizeCalled || skipped.normalizeCalled {
		t.Error("NormalizeScore should run for the plugins that scored, and only them")
	}
}

// raw scores without NormalizeScore.
type rawScorer struct{ score int64 }

func (rawScorer) Name() string { return "Raw" }
func (r rawScorer) Score(*framework.CycleState, *framework.PodInfo, *framework.NodeInfo) (int64, *framework.Status) {
	return r.score, nil
}

func TestAScoreOutsideZeroToHundredIsAnError(t *testing.T) {
	fwk, _ := framework.New(framework.PluginSpec{Plugin: rawScorer{101}})
	_, _, s := fwk.RunScorePlugins(framework.NewCycleState(), framework.NewPodInfo(st.MakePod("p").Obj()), nodes("n1"))
	if s.Code() != framework.Error || !strings.Contains(s.Message(), "outside [0, 100]") || s.Plugin() != "Raw" {
		t.Errorf("status = %v %q (%s)", s.Code(), s.Message(), s.Plugin())
	}
}

func TestAPluginCanBeEnabledAtOneExtensionPointOnly(t *testing.T) {
	fwk, err := framework.New(framework.PluginSpec{Plugin: &fake{name: "A"}, At: framework.AtScore})
	if err != nil {
		t.Fatal(err)
	}
	filters, scores := fwk.ListPlugins()
	if len(filters) != 0 || len(scores) != 1 || scores[0] != "A:1" {
		t.Errorf("filters %v, scores %v", filters, scores)
	}
	if _, err := framework.New(framework.PluginSpec{Plugin: &fake{name: "A"}}, framework.PluginSpec{Plugin: &fake{name: "A"}}); err == nil {
		t.Error("a plugin was enabled twice")
	}
}

func TestDefaultNormalizeScore(t *testing.T) {
	for _, tc := range []struct {
		name    string
		raw     []int64
		reverse bool
		want    []int64
	}{
		{"the highest raw score becomes 100", []int64{1, 2, 4}, false, []int64{25, 50, 100}},
		{"reversed, the highest becomes 0 and none becomes 100", []int64{2, 1, 0}, true, []int64{0, 50, 100}},
		{"all zero stay zero", []int64{0, 0}, false, []int64{0, 0}},
		{"all zero reversed are all 100", []int64{0, 0}, true, []int64{100, 100}},
	} {
		scores := make([]framework.NodeScore, len(tc.raw))
		for i, r := range tc.raw {
			scores[i].Score = r
		}
		framework.DefaultNormalizeScore(tc.reverse, scores)
		for i, want := range tc.want {
			if scores[i].Score != want {
				t.Errorf("%s: got %v", tc.name, scores)
				break
			}
		}
	}
}

func TestPodsWithLabelFollowsThePodsOfTheNode(t *testing.T) {
	ni := st.NodeInfo(st.MakeNode("n1").Obj(), st.MakePod("a").Label("app", "web").Obj(), st.MakePod("b").Label("app", "db").Obj())
	if got := ni.PodsWithLabel("app", "web"); len(got) != 1 || got[0].Pod.Name != "a" {
		t.Fatalf("app=web: %d pods", len(got))
	}
	clone := ni.Clone()
	ni.AddPodInfo(framework.NewPodInfo(st.MakePod("c").Label("app", "web").Obj()))
	if got := ni.PodsWithLabel("app", "web"); len(got) != 2 {
		t.Errorf("after adding a web pod: %d pods", len(got))
	}
	ni.RemovePod("default/a")
	if got := ni.PodsWithLabel("app", "web"); len(got) != 1 || got[0].Pod.Name != "c" {
		t.Errorf("after removing a: %v", got)
	}
	if got := clone.PodsWithLabel("app", "web"); len(got) != 1 || got[0].Pod.Name != "a" {
		t.Errorf("the clone changed with the original: %v", got)
	}
}
