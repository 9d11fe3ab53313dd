package e2e

import (
	"fmt"
	"hash/fnv"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// The sequential specification the HA linearizability test checks a
// concurrent history against, with porcupine: each ConfigMap's data value
// is a register, read by GET, written by PUT (an unconditional update)
// and compare-and-swapped by PUT with metadata.resourceVersion
// (Kubernetes' optimistic concurrency: 409 Conflict when the object has
// moved on). The registers are independent, so the history is checked
// one ConfigMap at a time (porcupine's partitions).
//
// Every write writes a value no other write writes, so a value names the
// write that made it: a read that returns it says which write it follows,
// and a compare-and-swap's expected value says which state it wanted to
// replace. The state carries the object's resourceVersion too (etcd's
// ModRevision), which the model holds to etcd's promises: a read sees the
// revision of the write it follows, and each write's revision is greater
// than the one it replaces.

// registerOpKind is what a client asked of a ConfigMap.
type registerOpKind int

const (
	readOp  registerOpKind = iota // GET
	writeOp                       // POST (the creation) or PUT without resourceVersion
	casOp                         // PUT with the resourceVersion of an earlier GET
)

func (k registerOpKind) String() string {
	return [...]string{"read", "write", "cas"}[k]
}

// registerInput is one operation as the client invoked it.
type registerInput struct {
	kind  registerOpKind
	key   string // the ConfigMap's name: the partition
	value string // write, cas: the value written, unique in the history
	// cas: the value and resourceVersion the client read before; the
	// update carries expectRV as its precondition.
	expect   string
	expectRV int64
}

// outcome is how an operation ended, as far as the client can tell.
type outcome int

const (
	// succeeded: a 2xx answer.
	succeeded outcome = iota
	// conflicted: 409 to a compare-and-swap: the object was not at the
	// resourceVersion given, and nothing was written.
	conflicted
	// indeterminate: no answer (the connection broke, the client timed
	// out) or a 5xx (etcd's "leader changed", "request timed out"): the
	// write may have been committed or not. Such an operation is given a
	// return time after every other operation's (infinity, as etcd's
	// robustness tests model a failed request), and the model lets it
	// take effect at any point after its call, or never.
	indeterminate
)

func (o outcome) String() string {
	return [...]string{"ok", "conflict", "unknown"}[o]
}

// registerOutput is what the client got back.
type registerOutput struct {
	outcome outcome
	value   string // read: the value seen
	rv      int64  // read: the object's resourceVersion; write, cas: the new one
}

// registerState is one ConfigMap's data value and resourceVersion. rv 0
// means not known: the value of an indeterminate write that the model
// lets take effect, whose revision no answer told; the next read fixes
// it. The zero state is "not created yet".
type registerState struct {
	value string
	rv    int64
}

// stepRegister returns the states a ConfigMap can be in after the
// operation, from state s: none if the operation could not have had that
// output in s, two if an indeterminate write may or may not have taken
// effect.
func stepRegister(s registerState, in registerInput, out registerOutput) []registerState {
	// newer says whether a write acknowledged with revision rv can follow
	// s: etcd's revisions only grow.
	newer := func(rv int64) bool { return s.rv == 0 || rv > s.rv }
	switch in.kind {
	case readOp:
		if out.value != s.value || (s.rv != 0 && out.rv != s.rv) {
			return nil
		}
		return []registerState{{out.value, out.rv}}
	case writeOp:
		switch out.outcome {
		case succeeded:
			if !newer(out.rv) {
				return nil
			}
			return []registerState{{in.value, out.rv}}
		case indeterminate:
			return []registerState{s, {in.value, 0}}
		}
	case casOp:
		// The server compares resourceVersions; a value has one, as each
		// write writes a value of its own, so the model compares both.
		matches := s.value == in.expect && (s.rv == 0 || s.rv == in.expectRV)
		switch out.outcome {
		case succeeded:
			if !matches || !newer(out.rv) {
				return nil
			}
			return []registerState{{in.value, out.rv}}
		case conflicted:
			if matches {
				return nil
			}
			return []registerState{s}
		case indeterminate:
			if matches {
				return []registerState{s, {in.value, 0}}
			}
			return []registerState{s}
		}
	}
	return nil
}

// registerModel is the specification for porcupine: the nondeterministic
// step above, one partition per ConfigMap.
func registerModel() porcupine.Model {
	nd := porcupine.NondeterministicModel{
		Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
			byKey := map[string][]porcupine.Operation{}
			var keys []string
			for _, op := range history {
				k := op.Input.(registerInput).key
				if _, ok := byKey[k]; !ok {
					keys = append(keys, k)
				}
				byKey[k] = append(byKey[k], op)
			}
			var parts [][]porcupine.Operation
			for _, k := range keys {
				parts = append(parts, byKey[k])
			}
			return parts
		},
		Init: func() []any { return []any{registerState{}} },
		Step: func(state, input, output any) []any {
			var next []any
			for _, s := range stepRegister(state.(registerState), input.(registerInput), output.(registerOutput)) {
				next = append(next, s)
			}
			return next
		},
		Hash: func(state any) uint64 {
			s := state.(registerState)
			h := fnv.New64a()
			fmt.Fprintf(h, "%s/%d", s.value, s.rv)
			return h.Sum64()
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(registerInput), output.(registerOutput)
			switch in.kind {
			case readOp:
				return fmt.Sprintf("get(%s) -> %s@%d", in.key, out.value, out.rv)
			case writeOp:
				return fmt.Sprintf("put(%s, %s) -> %v@%d", in.key, in.value, out.outcome, out.rv)
			default:
				return fmt.Sprintf("cas(%s, %s@%d -> %s) -> %v@%d", in.key, in.expect, in.expectRV, in.value, out.outcome, out.rv)
			}
		},
		DescribeState: func(state any) string {
			s := state.(registerState)
			return fmt.Sprintf("%s@%d", s.value, s.rv)
		},
	}
	return nd.ToModel()
}

// registerHistory records the operations of concurrent clients, each with
// its call and return time on one monotonic clock (time.Since of one
// start reads the monotonic clock).
type registerHistory struct {
	began time.Time

	mu      sync.Mutex
	done    []porcupine.Operation // answered: call and return known
	pending []porcupine.Operation // indeterminate: return time set by operations
	streams int                   // client ids handed out
}

func newRegisterHistory() *registerHistory { return &registerHistory{began: time.Now()} }

// now is the time on the history's clock, for Call and Return.
func (h *registerHistory) now() int64 { return time.Since(h.began).Nanoseconds() }

// newStream is a client id for porcupine's visualization, whose rows are
// sequential: a client whose operation is left indeterminate (it may be
// taking effect still) goes on under a new id, as etcd's robustness
// tests do.
func (h *registerHistory) newStream() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.streams++
	return h.streams - 1
}

// add records one operation. An indeterminate read is not recorded: it
// changed nothing and told nothing.
func (h *registerHistory) add(stream int, in registerInput, call int64, out registerOutput, ret int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	op := porcupine.Operation{ClientId: stream, Input: in, Call: call, Output: out, Return: ret}
	switch {
	case out.outcome != indeterminate:
		h.done = append(h.done, op)
	case in.kind != readOp:
		h.pending = append(h.pending, op)
	}
}

// operations is the history for porcupine: an indeterminate operation
// returns after every answered one (infinity, for the checker: it may
// take effect at any point after its call, or not at all).
func (h *registerHistory) operations() []porcupine.Operation {
	h.mu.Lock()
	defer h.mu.Unlock()
	var last int64
	for _, op := range h.done {
		last = max(last, op.Return)
	}
	ops := append([]porcupine.Operation(nil), h.done...)
	for _, op := range h.pending {
		op.Return = max(last, op.Call) + 1
		ops = append(ops, op)
	}
	return ops
}

// The model must tell a linearizable history from one that is not, or the
// HA test's verdict would mean nothing: small histories of one and two
// ConfigMaps, each with its verdict.
func TestRegisterModelTellsLinearizableHistoriesFromOthers(t *testing.T) {
	const inf = 1000 // the return time of an indeterminate operation
	create := func(key, v string, rv int64) porcupine.Operation {
		return porcupine.Operation{Input: registerInput{kind: writeOp, key: key, value: v}, Call: 0, Output: registerOutput{rv: rv}, Return: 1}
	}
	read := func(key, v string, rv, call, ret int64) porcupine.Operation {
		return porcupine.Operation{Input: registerInput{kind: readOp, key: key}, Call: call, Output: registerOutput{value: v, rv: rv}, Return: ret}
	}
	write := func(key, v string, o outcome, rv, call, ret int64) porcupine.Operation {
		return porcupine.Operation{Input: registerInput{kind: writeOp, key: key, value: v}, Call: call, Output: registerOutput{outcome: o, rv: rv}, Return: ret}
	}
	cas := func(key, expect string, expectRV int64, v string, o outcome, rv, call, ret int64) porcupine.Operation {
		return porcupine.Operation{Input: registerInput{kind: casOp, key: key, value: v, expect: expect, expectRV: expectRV},
			Call: call, Output: registerOutput{outcome: o, rv: rv}, Return: ret}
	}
	tests := []struct {
		name    string
		history []porcupine.Operation
		want    bool
	}{
		{"a read after an acknowledged write sees it",
			[]porcupine.Operation{create("x", "a", 1), write("x", "b", succeeded, 2, 2, 3), read("x", "b", 2, 4, 5)}, true},
		{"a read after an acknowledged write that sees the value before is a stale read",
			[]porcupine.Operation{create("x", "a", 1), write("x", "b", succeeded, 2, 2, 3), read("x", "a", 1, 4, 5)}, false},
		{"a read concurrent with a write may see the value before",
			[]porcupine.Operation{create("x", "a", 1), write("x", "b", succeeded, 2, 2, 6), read("x", "a", 1, 3, 4)}, true},
		{"a read of a value nobody wrote is illegal",
			[]porcupine.Operation{create("x", "a", 1), read("x", "z", 1, 2, 3)}, false},
		{"a read that sees a value with another resourceVersion than its write's is illegal",
			[]porcupine.Operation{create("x", "a", 1), write("x", "b", succeeded, 2, 2, 3), read("x", "b", 7, 4, 5)}, false},
		{"an indeterminate write may have taken effect",
			[]porcupine.Operation{create("x", "a", 1), write("x", "b", indeterminate, 0, 2, inf), read("x", "b", 5, 4, 5)}, true},
		{"an indeterminate write may have been lost",
			[]porcupine.Operation{create("x", "a", 1), write("x", "b", indeterminate, 0, 2, inf), read("x", "a", 1, 4, 5)}, true},
		{"an indeterminate write cannot take effect before it was sent",
			[]porcupine.Operation{create("x", "a", 1), read("x", "b", 5, 2, 3), write("x", "b", indeterminate, 0, 4, inf)}, false},
		{"a value seen and then the value before it is illegal, indeterminate write or not",
			[]porcupine.Operation{create("x", "a", 1), write("x", "b", indeterminate, 0, 2, inf), read("x", "b", 5, 3, 4), read("x", "a", 1, 5, 6)}, false},
		{"a compare-and-swap on the current value succeeds",
			[]porcupine.Operation{create("x", "a", 1), cas("x", "a", 1, "b", succeeded, 2, 2, 3), read("x", "b", 2, 4, 5)}, true},
		{"a compare-and-swap that conflicts though nothing changed is illegal",
			[]porcupine.Operation{create("x", "a", 1), cas("x", "a", 1, "b", conflicted, 0, 2, 3)}, false},
		{"a compare-and-swap that conflicts with a concurrent write is legal",
			[]porcupine.Operation{create("x", "a", 1), write("x", "c", succeeded, 2, 2, 5), cas("x", "a", 1, "b", conflicted, 0, 3, 4)}, true},
		{"a compare-and-swap that succeeds over a write acknowledged before it is a lost update",
			[]porcupine.Operation{create("x", "a", 1), write("x", "c", succeeded, 2, 2, 3), cas("x", "a", 1, "b", succeeded, 3, 4, 5)}, false},
		{"an indeterminate compare-and-swap may have taken effect",
			[]porcupine.Operation{create("x", "a", 1), cas("x", "a", 1, "b", indeterminate, 0, 2, inf), read("x", "b", 4, 3, 4)}, true},
		{"a write acknowledged with a revision below one read before it is illegal",
			[]porcupine.Operation{create("x", "a", 1), write("x", "b", succeeded, 5, 2, 3), read("x", "b", 5, 4, 5), write("x", "c", succeeded, 4, 6, 7)}, false},
		{"two ConfigMaps are independent registers",
			[]porcupine.Operation{create("x", "a", 1), create("y", "p", 2), write("x", "b", succeeded, 3, 2, 3), read("y", "p", 2, 4, 5), read("x", "b", 3, 4, 5)}, true},
		{"a stale read of one ConfigMap is caught among reads of another",
			[]porcupine.Operation{create("x", "a", 1), create("y", "p", 2), write("x", "b", succeeded, 3, 2, 3), read("y", "p", 2, 4, 5), read("x", "a", 1, 4, 5)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := porcupine.CheckOperations(registerModel(), tt.history); got != tt.want {
				t.Errorf("linearizable = %v, want %v", got, tt.want)
			}
		})
	}
}
