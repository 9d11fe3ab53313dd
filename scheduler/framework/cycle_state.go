package framework

import (
	"fmt"
	"slices"
)

// StateKey names a plugin's entry in the CycleState; by convention
// "PreFilter" or "PreScore" followed by the plugin's name.
type StateKey string

// StateData is what a plugin stores for the rest of the cycle.
type StateData any

// StateCloner is implemented by the StateData a plugin changes after
// PreFilter: InterPodAffinity's counts, which its AddPod and RemovePod
// (PreFilterExtensions) keep up to date while preemption takes pods off a
// node. CycleState.Clone copies such data; any other StateData is never
// written after PreFilter, so the clone shares it.
type StateCloner interface {
	Clone() StateData
}

// CycleState is the scratch space of one scheduling cycle. A plugin's
// PreFilter or PreScore computes, once, what its Filter or Score needs for
// every node (the pod's parsed node affinity, the topology counts of
// inter-pod affinity...) and writes it here; Filter and Score read it. A
// new CycleState is made for every cycle, so nothing leaks from one pod to
// the next.
//
// It is used by the scheduling goroutine alone and is not locked.
type CycleState struct {
	storage map[StateKey]StateData
	// skipFilter and skipScore are bit sets over the framework's filter and
	// score plugins, by position: bit i set means the i-th plugin's PreFilter
	// (PreScore) returned Skip, so its Filter (Score) is not called in this
	// cycle. Bits, not a set of names, because Filter runs for every node:
	// a cycle over 5000 nodes tests them tens of thousands of times.
	skipFilter uint64
	skipScore  uint64
	// skippedFilters and skippedScores say which plugins skipped and why,
	// for the decision's explanation.
	skippedFilters, skippedScores []SkippedPlugin
	// notes are what plugins decided besides filtering and scoring, for
	// the explanation (AddNote).
	notes []Note
}

// SkippedPlugin is a plugin whose PreFilter or PreScore returned Skip, and
// the reason it gave ("the pod asks for no host port").
type SkippedPlugin struct {
	Name   string `json:"name"`
	Reason string `json:"reason,omitempty"`
}

// SkippedFilters are the filters skipped in this cycle.
func (c *CycleState) SkippedFilters() []SkippedPlugin { return c.skippedFilters }

// SkippedScores are the score plugins skipped in this cycle.
func (c *CycleState) SkippedScores() []SkippedPlugin { return c.skippedScores }

// Clone returns a copy for a what-if: preemption tries each candidate node
// on a clone of the node and of the state, so taking pods off one node
// changes nothing for the next.
func (c *CycleState) Clone() *CycleState {
	out := &CycleState{
		storage:    make(map[StateKey]StateData, len(c.storage)),
		skipFilter: c.skipFilter, skipScore: c.skipScore,
		skippedFilters: c.skippedFilters, skippedScores: c.skippedScores, // read only
		notes: slices.Clip(c.notes), // an append to either copies
	}
	for k, d := range c.storage {
		if cl, ok := d.(StateCloner); ok {
			d = cl.Clone()
		}
		out.storage[k] = d
	}
	return out
}

// NewCycleState returns an empty state.
func NewCycleState() *CycleState {
	return &CycleState{storage: map[StateKey]StateData{}}
}

// Write stores data under key, replacing what was there.
func (c *CycleState) Write(key StateKey, data StateData) { c.storage[key] = data }

// Read returns what was stored under key, or an error if nothing was:
// usually a plugin enabled at Filter whose PreFilter did not run.
func (c *CycleState) Read(key StateKey) (StateData, error) {
	if d, ok := c.storage[key]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("%q not found in the cycle state", key)
}

// ReadAs is Read with the type assertion every plugin would otherwise
// write: ReadAs[*preFilterState](state, preFilterStateKey).
func ReadAs[T StateData](c *CycleState, key StateKey) (T, error) {
	var zero T
	d, err := c.Read(key)
	if err != nil {
		return zero, err
	}
	t, ok := d.(T)
	if !ok {
		return zero, fmt.Errorf("%q holds a %T, not a %T", key, d, zero)
	}
	return t, nil
}
