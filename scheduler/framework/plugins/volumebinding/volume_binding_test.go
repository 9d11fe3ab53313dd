package volumebinding

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

func newPlugin(s *fakeStorage) *VolumeBinding {
	return New(framework.Handle{Storage: s, StorageWriter: s})
}

func podWith(name string, claims ...string) *framework.PodInfo {
	p := st.MakePod(name)
	for i, c := range claims {
		p.Volume(claimVolume("v"+string(rune('0'+i)), c))
	}
	return framework.NewPodInfo(p.Obj())
}

func TestPreFilter(t *testing.T) {
	deleting := claim("data", "fast", "1Gi")
	deleting.DeletionTimestamp = &metav1.Time{}
	lost := boundClaim("data", "fast", "pv-gone")
	lost.Status.Phase = corev1.ClaimLost
	prebound := claim("data", "wait", "1Gi")
	prebound.Spec.VolumeName = "pv-1"
	tests := []struct {
		name     string
		objs     []any
		claims   []string
		wantCode framework.Code
		wantMsg  string
	}{
		{"a pod without claims skips the plugin", nil, nil, framework.Skip, ""},
		{"a missing claim rejects the pod with the lister's not found", nil, []string{"data"},
			framework.UnschedulableAndUnresolvable, `persistentvolumeclaim "data" not found`},
		{"an unbound claim of an Immediate class waits for the PV controller", []any{immediate, claim("data", "fast", "1Gi")}, []string{"data"},
			framework.UnschedulableAndUnresolvable, ErrReasonUnboundImmediate},
		{"an unbound claim without a class is immediate", []any{claim("data", "", "1Gi")}, []string{"data"},
			framework.UnschedulableAndUnresolvable, ErrReasonUnboundImmediate},
		{"an unbound claim whose class does not exist is immediate", []any{claim("data", "gold", "1Gi")}, []string{"data"},
			framework.UnschedulableAndUnresolvable, ErrReasonUnboundImmediate},
		{"a claim pre-bound to a volume is the PV controller's, even of a WaitForFirstConsumer class", []any{waiting, prebound}, []string{"data"},
			framework.UnschedulableAndUnresolvable, ErrReasonUnboundImmediate},
		{"a claim being deleted cannot be used", []any{immediate, deleting}, []string{"data"},
			framework.UnschedulableAndUnresolvable, `persistentvolumeclaim "data" is being deleted`},
		{"a Lost claim cannot be used", []any{immediate, lost}, []string{"data"},
			framework.UnschedulableAndUnresolvable, `persistentvolumeclaim "data" bound to non-existent persistentvolume "pv-gone"`},
		{"a bound claim and a WaitForFirstConsumer claim go on to Filter", []any{immediate, waiting, boundClaim("a", "fast", "pv-a"), claim("b", "wait", "1Gi")},
			[]string{"a", "b"}, framework.Success, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := newPlugin(newStorage(tt.objs...)).PreFilter(framework.NewCycleState(), podWith("p", tt.claims...), nil)
			if got.Code() != tt.wantCode || (tt.wantMsg != "" && got.Message() != tt.wantMsg) {
				t.Errorf("PreFilter = %v %q, want %v %q", got.Code(), got.Message(), tt.wantCode, tt.wantMsg)
			}
		})
	}
}

func TestFilter(t *testing.T) {
	node01 := st.MakeNode("node01").Zone("a").Obj()
	node02 := st.MakeNode("node02").Zone("b").Obj()
	tests := []struct {
		name   string
		objs   []any
		claims []string
		want   map[string]string // node → reasons ("" fits)
	}{
		{"a bound claim's volume pinned to node01 fits node01 only",
			[]any{immediate, boundClaim("data", "fast", "pv-1"), volume("pv-1", "fast", "1Gi", "node01")}, []string{"data"},
			map[string]string{"node01": "", "node02": ErrReasonNodeConflict}},
		{"a bound claim's volume without nodeAffinity fits every node",
			[]any{immediate, boundClaim("data", "fast", "pv-1"), volume("pv-1", "fast", "1Gi")}, []string{"data"},
			map[string]string{"node01": "", "node02": ""}},
		{"a bound claim whose volume is gone fits no node",
			[]any{immediate, boundClaim("data", "fast", "pv-1")}, []string{"data"},
			map[string]string{"node01": ErrReasonPVNotExist, "node02": ErrReasonPVNotExist}},
		{"a waiting claim takes an Available volume of its class on the node, or finds none without a provisioner",
			[]any{local, claim("data", "local-wait", "1Gi"), volume("pv-1", "local-wait", "1Gi", "node01")}, []string{"data"},
			map[string]string{"node01": "", "node02": ErrReasonBindConflict}},
		{"a volume too small, or of another class, does not do",
			[]any{local, claim("data", "local-wait", "5Gi"), volume("pv-1", "local-wait", "1Gi", "node01"), volume("pv-2", "other", "10Gi", "node01")},
			[]string{"data"}, map[string]string{"node01": ErrReasonBindConflict}},
		{"two waiting claims cannot both take the one volume",
			[]any{local, claim("a", "local-wait", "1Gi"), claim("b", "local-wait", "1Gi"), volume("pv-1", "local-wait", "1Gi", "node01")},
			[]string{"a", "b"}, map[string]string{"node01": ErrReasonBindConflict}},
		{"a waiting claim of a class that provisions fits every node",
			[]any{waiting, claim("data", "wait", "1Gi")}, []string{"data"},
			map[string]string{"node01": "", "node02": ""}},
		{"a class's allowedTopologies admit only its zones",
			[]any{zoneA, claim("data", "zone-a", "1Gi")}, []string{"data"},
			map[string]string{"node01": "", "node02": ErrReasonBindConflict}},
		{"a claim whose provisioning began for node02 fits node02 only",
			[]any{waiting, withAnnotation(claim("data", "wait", "1Gi"), storagehelpers.AnnSelectedNode, "node02")}, []string{"data"},
			map[string]string{"node01": ErrReasonBindConflict, "node02": ""}},
		{"a volume pinned elsewhere and an unbindable claim give both reasons",
			[]any{immediate, local, boundClaim("a", "fast", "pv-a"), volume("pv-a", "fast", "1Gi", "node02"), claim("b", "local-wait", "1Gi")},
			[]string{"a", "b"}, map[string]string{"node01": ErrReasonNodeConflict + ", " + ErrReasonBindConflict}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, state, pod := newPlugin(newStorage(tt.objs...)), framework.NewCycleState(), podWith("p", tt.claims...)
			if s := pl.PreFilter(state, pod, nil); !s.IsSuccess() {
				t.Fatalf("PreFilter = %v %q", s.Code(), s.Message())
			}
			for _, n := range []*corev1.Node{node01, node02} {
				want, ok := tt.want[n.Name]
				if !ok {
					continue
				}
				got := pl.Filter(state, pod, st.NodeInfo(n))
				if got.Message() != want || (want != "" && got.Code() != framework.UnschedulableAndUnresolvable) {
					t.Errorf("%s: Filter = %v %q, want %q", n.Name, got.Code(), got.Message(), want)
				}
			}
		})
	}
}

func TestAVolumeReservedForOnePodIsTakenForTheNext(t *testing.T) {
	s := newStorage(local, claim("a", "local-wait", "1Gi"), claim("b", "local-wait", "1Gi"), volume("pv-1", "local-wait", "1Gi", "node01"))
	pl, node := newPlugin(s), st.NodeInfo(st.MakeNode("node01").Obj())
	first, second := framework.NewCycleState(), framework.NewCycleState()
	if s := pl.PreFilter(first, podWith("p1", "a"), nil); !s.IsSuccess() {
		t.Fatal(s.Message())
	}
	if s := pl.Reserve(first, podWith("p1", "a"), node); !s.IsSuccess() {
		t.Fatalf("Reserve: %s", s.Message())
	}
	if notes := first.Notes(); len(notes) != 1 || !strings.Contains(notes[0].Text, "claim default/a: volume pv-1") {
		t.Errorf("notes %v", notes)
	}
	pl.PreFilter(second, podWith("p2", "b"), nil)
	if got := pl.Filter(second, podWith("p2", "b"), node); got.Message() != ErrReasonBindConflict {
		t.Errorf("the next pod's claim: %q, want %q", got.Message(), ErrReasonBindConflict)
	}
	pl.Unreserve(first, podWith("p1", "a"), "node01")
	third := framework.NewCycleState()
	pl.PreFilter(third, podWith("p2", "b"), nil)
	if got := pl.Filter(third, podWith("p2", "b"), node); !got.IsSuccess() {
		t.Errorf("after Unreserve the volume is free again: %q", got.Message())
	}
}

func TestAnAssumptionGivesWayToANewerInformerObject(t *testing.T) {
	a := newAssumeCache()
	pv := volume("pv-1", "c", "1Gi")
	pv.ResourceVersion = "5"
	assumed := pv.DeepCopy()
	assumed.Spec.ClaimRef = &corev1.ObjectReference{Name: "a"}
	a.assumeVolume(assumed)
	if got, _ := a.volume("pv-1", pv, true); got != assumed {
		t.Error("the informer's object of the same version replaced the assumption")
	}
	later := pv.DeepCopy()
	later.ResourceVersion = "7"
	if got, _ := a.volume("pv-1", later, true); got != later {
		t.Error("the assumption outlived a newer informer object")
	}
	if got, _ := a.volume("pv-1", pv, true); got != pv {
		t.Error("a dropped assumption came back")
	}
}
