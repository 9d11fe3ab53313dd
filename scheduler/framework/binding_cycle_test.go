package framework_test

import (
	"context"
	"slices"
	"testing"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// binder is a filter with Reserve and PreBind, logging its calls.
type binder struct {
	name string
	log  *[]string
	fail string // the call that fails: "reserve" or "prebind"
}

func (b *binder) Name() string { return b.name }
func (b *binder) Filter(*framework.CycleState, *framework.PodInfo, *framework.NodeInfo) *framework.Status {
	return nil
}
func (b *binder) Reserve(*framework.CycleState, *framework.PodInfo, *framework.NodeInfo) *framework.Status {
	*b.log = append(*b.log, "reserve "+b.name)
	if b.fail == "reserve" {
		return framework.NewStatus(framework.Unschedulable, "taken")
	}
	return nil
}
func (b *binder) Unreserve(*framework.CycleState, *framework.PodInfo, string) {
	*b.log = append(*b.log, "unreserve "+b.name)
}
func (b *binder) PreBind(context.Context, *framework.CycleState, *framework.PodInfo, string) *framework.Status {
	*b.log = append(*b.log, "prebind "+b.name)
	if b.fail == "prebind" {
		return framework.NewStatus(framework.Error, "binding volumes: context deadline exceeded")
	}
	return nil
}

func TestTheBindingCycle(t *testing.T) {
	tests := []struct {
		name     string
		failB    string
		wantLog  []string
		wantFail string
	}{
		{"Reserve and PreBind run in order, Unreserve in reverse", "", []string{"reserve a", "reserve b", "prebind a", "prebind b", "unreserve b", "unreserve a"}, ""},
		{"a failed Reserve stops the others and names its plugin", "reserve", []string{"reserve a", "reserve b"}, `running Reserve plugin "b": taken`},
		{"a failed PreBind is worded as kube-scheduler's", "prebind", []string{"reserve a", "reserve b", "prebind a", "prebind b"},
			`running PreBind plugin "b": binding volumes: context deadline exceeded`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log []string
			fwk, err := framework.New(framework.PluginSpec{Plugin: &binder{name: "a", log: &log}}, framework.PluginSpec{Plugin: &binder{name: "b", log: &log, fail: tt.failB}})
			if err != nil {
				t.Fatal(err)
			}
			state, pod, node := framework.NewCycleState(), framework.NewPodInfo(st.MakePod("p").Obj()), st.NodeInfo(st.MakeNode("node01").Obj())
			s := fwk.RunReservePlugins(state, pod, node)
			if s.IsSuccess() {
				s = fwk.RunPreBindPlugins(context.Background(), state, pod, "node01")
			}
			if s.IsSuccess() {
				fwk.RunUnreservePlugins(state, pod, "node01")
			}
			if s.Message() != tt.wantFail || (tt.wantFail != "" && s.Plugin() != "b") {
				t.Errorf("status %q (plugin %q), want %q", s.Message(), s.Plugin(), tt.wantFail)
			}
			if !slices.Equal(log, tt.wantLog) {
				t.Errorf("calls %v\nwant  %v", log, tt.wantLog)
			}
		})
	}
}

func TestAPluginDisabledAtFilterTakesNoPartInTheBindingCycle(t *testing.T) {
	var log []string
	fwk, _ := framework.New(framework.PluginSpec{Plugin: &binder{name: "a", log: &log}, At: framework.AtScore})
	fwk.RunReservePlugins(framework.NewCycleState(), framework.NewPodInfo(st.MakePod("p").Obj()), st.NodeInfo(st.MakeNode("n").Obj()))
	if len(log) != 0 {
		t.Errorf("calls %v", log)
	}
}
