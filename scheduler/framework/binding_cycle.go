package framework

import (
	"context"
	"fmt"
)

// The binding cycle: what happens to a pod once the scheduling cycle has
// chosen its node, kube-scheduler's Reserve and PreBind extension points.
//
//	scheduling goroutine  AssumePod, RunReservePlugins      the node's room, and what else the pod takes (a volume), are its own now
//	binding goroutine     RunPreBindPlugins, then Binding   the API calls that must land first (a volume's claimRef); may wait
//	on any failure        RunUnreservePlugins, ForgetPod    all of it is given back
//
// A plugin enabled at filter takes part in the binding cycle too if it
// implements these (mkube's configuration has no reserve or preBind lists:
// VolumeBinding, the one plugin with them, needs both or neither).

// ReservePlugin keeps for the pod, in the plugin's own memory, what it
// found for the node the pod is assumed on, so that the next cycles do
// not give it to another pod (VolumeBinding: a static volume for each
// claim). node is the chosen node as the cycle's snapshot has it.
// Unreserve gives it back; it must undo a Reserve that failed halfway
// too, and do nothing for one that never ran.
type ReservePlugin interface {
	Plugin
	Reserve(state *CycleState, pod *PodInfo, node *NodeInfo) *Status
	Unreserve(state *CycleState, pod *PodInfo, node string)
}

// PreBindPlugin does what must be in the API server before the pod is
// bound. It runs on the binding goroutine, may call the API server and
// wait (VolumeBinding waits for the pod's claims to be bound), and stops
// when ctx ends.
type PreBindPlugin interface {
	Plugin
	PreBind(ctx context.Context, state *CycleState, pod *PodInfo, node string) *Status
}

// addBindingCycle registers p at Reserve and PreBind if it has them.
func (f *Framework) addBindingCycle(p Plugin) {
	if r, ok := p.(ReservePlugin); ok {
		f.reserves = append(f.reserves, r)
	}
	if b, ok := p.(PreBindPlugin); ok {
		f.preBinds = append(f.preBinds, b)
	}
}

// RunReservePlugins runs every Reserve in order and returns the first
// failure, naming its plugin; the caller then runs RunUnreservePlugins.
func (f *Framework) RunReservePlugins(state *CycleState, pod *PodInfo, node *NodeInfo) *Status {
	for _, p := range f.reserves {
		if st := p.Reserve(state, pod, node); !st.IsSuccess() {
			return AsStatus(fmt.Errorf("running Reserve plugin %q: %w", p.Name(), st.AsError())).WithPlugin(p.Name())
		}
	}
	return nil
}

// RunUnreservePlugins runs every Unreserve, in the reverse order of
// Reserve, as kube-scheduler does.
func (f *Framework) RunUnreservePlugins(state *CycleState, pod *PodInfo, node string) {
	for i := len(f.reserves) - 1; i >= 0; i-- {
		f.reserves[i].Unreserve(state, pod, node)
	}
}

// RunPreBindPlugins runs every PreBind in order and returns the first
// failure as kube-scheduler words it: `running PreBind plugin
// "VolumeBinding": binding volumes: ...`.
func (f *Framework) RunPreBindPlugins(ctx context.Context, state *CycleState, pod *PodInfo, node string) *Status {
	for _, p := range f.preBinds {
		if st := p.PreBind(ctx, state, pod, node); !st.IsSuccess() {
			return AsStatus(fmt.Errorf("running PreBind plugin %q: %w", p.Name(), st.AsError())).WithPlugin(p.Name())
		}
	}
	return nil
}

// Note is a plugin's decision that is neither a verdict on a node nor a
// score, told in the explanation: "claim default/data: volume pv-node01,
// bound by the scheduler".
type Note struct {
	Plugin string `json:"plugin"`
	Text   string `json:"text"`
}

// AddNote records a note of plugin for the explanation of this cycle's
// decision. Reserve plugins add them, on the scheduling goroutine.
func (c *CycleState) AddNote(plugin, text string) {
	c.notes = append(c.notes, Note{plugin, text})
}

// Notes are the notes added in this cycle.
func (c *CycleState) Notes() []Note { return c.notes }
