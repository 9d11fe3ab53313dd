package volumebinding

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// reserve runs PreFilter, Filter and Reserve of pod on node, as a
// scheduling cycle that chose node does.
func reserve(t *testing.T, pl *VolumeBinding, pod *framework.PodInfo, node *corev1.Node) *framework.CycleState {
	t.Helper()
	state, ni := framework.NewCycleState(), st.NodeInfo(node)
	if s := pl.PreFilter(state, pod, nil); !s.IsSuccess() {
		t.Fatalf("PreFilter: %s", s.Message())
	}
	if s := pl.Filter(state, pod, ni); !s.IsSuccess() {
		t.Fatalf("Filter: %s", s.Message())
	}
	if s := pl.Reserve(state, pod, ni); !s.IsSuccess() {
		t.Fatalf("Reserve: %s", s.Message())
	}
	return state
}

// preBind reserves node01 for pod and runs PreBind in a synctest bubble,
// whose clock moves only while every goroutine in it waits: each time
// PreBind waits for its next look, controller(i) plays the PV controller,
// then a pollInterval passes (the bubble's time.Sleep is that step of its
// fake clock, taken at once). It returns what PreBind returned, and the
// cycle's state.
func preBind(t *testing.T, s *fakeStorage, pod *framework.PodInfo, controller func(i int)) (got *framework.Status, state *framework.CycleState) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		pl := New(framework.Handle{Storage: s, StorageWriter: s}) // the real clock: the bubble's
		state = reserve(t, pl, pod, st.MakeNode("node01").Obj())
		done := make(chan *framework.Status)
		go func() { done <- pl.PreBind(context.Background(), state, pod, "node01") }()
		for i := 0; ; i++ {
			synctest.Wait() // PreBind waits for its ticker, or to return
			select {
			case got = <-done:
				return
			default:
			}
			s.mu.Lock()
			controller(i)
			s.mu.Unlock()
			time.Sleep(pollInterval)
		}
	})
	return got, state
}

func TestPreBindBindsAStaticVolumeAndWaitsForTheClaim(t *testing.T) {
	s := newStorage(local, claim("data", "local-wait", "1Gi"), volume("pv-1", "local-wait", "1Gi", "node01"))
	got, _ := preBind(t, s, podWith("p", "data"), func(i int) {
		if i == 2 { // the PV controller binds the claim to the volume the scheduler chose
			bindInPlace(s, s.claims["default/data"], s.volumes["pv-1"])
		}
	})
	if !got.IsSuccess() {
		t.Fatalf("PreBind: %s", got.Message())
	}
	pv, _ := s.Volume("pv-1")
	if ref := pv.Spec.ClaimRef; ref == nil || ref.Name != "data" || ref.UID != "uid-data" || pv.Annotations[storagehelpers.AnnBoundByController] != "yes" {
		t.Errorf("the volume as written: claimRef %v, annotations %v", ref, pv.Annotations)
	}
	if !slices.Equal(s.updates, []string{"pv pv-1"}) {
		t.Errorf("API writes %v", s.updates)
	}
}

func TestPreBindAsksForProvisioningOnTheNode(t *testing.T) {
	s := newStorage(waiting, claim("data", "wait", "1Gi"))
	s.onUpdate = func(s *fakeStorage, obj any) { // the provisioner, at once
		if c, ok := obj.(*corev1.PersistentVolumeClaim); ok && c.Annotations[storagehelpers.AnnSelectedNode] == "node01" {
			pv := volume("pvc-uid-data", "wait", "1Gi")
			s.put(pv)
			bindInPlace(s, c, pv)
		}
	}
	got, state := preBind(t, s, podWith("p", "data"), func(int) {})
	if !got.IsSuccess() {
		t.Fatalf("PreBind: %s", got.Message())
	}
	if !slices.Equal(s.updates, []string{"pvc default/data"}) {
		t.Errorf("API writes %v", s.updates)
	}
	if notes := state.Notes(); len(notes) != 1 || notes[0].Text != "claim default/data: a new volume of class wait, provisioned for this node (volume.kubernetes.io/selected-node)" {
		t.Errorf("notes %v", notes)
	}
}

func TestPreBindFails(t *testing.T) {
	tests := []struct {
		name string
		tick func(s *fakeStorage, i int)
		want string
	}{
		{"when the provisioner hands the claim back", func(s *fakeStorage, i int) {
			if i == 1 {
				c := s.claims["default/data"].DeepCopy()
				delete(c.Annotations, storagehelpers.AnnSelectedNode)
				s.put(c)
			}
		}, `binding volumes: provisioning failed for PVC "data"`},
		{"after ten minutes without a binding", func(*fakeStorage, int) {}, "binding volumes: context deadline exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStorage(waiting, claim("data", "wait", "1Gi"))
			got, _ := preBind(t, s, podWith("p", "data"), func(i int) { tt.tick(s, i) })
			if got.IsSuccess() || got.Message() != tt.want {
				t.Errorf("PreBind = %v %q, want %q", got.Code(), got.Message(), tt.want)
			}
		})
	}
}

func TestPreBindOfBoundClaimsWritesNothing(t *testing.T) {
	s := newStorage(immediate, boundClaim("data", "fast", "pv-1"), volume("pv-1", "fast", "1Gi"))
	pl := newPlugin(s)
	pod := podWith("p", "data")
	state := reserve(t, pl, pod, st.MakeNode("node01").Obj())
	if got := pl.PreBind(context.Background(), state, pod, "node01"); !got.IsSuccess() || len(s.updates) != 0 {
		t.Errorf("PreBind = %q, writes %v", got.Message(), s.updates)
	}
	if notes := state.Notes(); len(notes) != 1 || notes[0].Text != "claim default/data: bound to volume pv-1" {
		t.Errorf("notes %v", notes)
	}
}
