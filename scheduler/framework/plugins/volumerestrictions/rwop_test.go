package volumerestrictions

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/scheduler/cache"
	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// claims is a StorageLister with claims only.
type claims map[string]*corev1.PersistentVolumeClaim

func (c claims) Claim(ns, name string) (*corev1.PersistentVolumeClaim, bool) {
	pvc, ok := c[ns+"/"+name]
	return pvc, ok
}
func (claims) Volume(string) (*corev1.PersistentVolume, bool) { return nil, false }
func (claims) Volumes() []*corev1.PersistentVolume            { return nil }
func (claims) Class(string) (*storagev1.StorageClass, bool)   { return nil, false }

func pvc(ns, name string, modes ...corev1.PersistentVolumeAccessMode) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PersistentVolumeClaimSpec{AccessModes: modes}}
}

func usingClaim(name string) corev1.Volume {
	return corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}}
}

func TestReadWriteOncePod(t *testing.T) {
	storage := claims{
		"default/db":    pvc("default", "db", corev1.ReadWriteOncePod),
		"default/share": pvc("default", "share", corev1.ReadWriteOnce),
		"other/db":      pvc("other", "db", corev1.ReadWriteOncePod),
	}
	holder := st.MakePod("db-0").Volume(usingClaim("db")).NodeName("node01").Obj()
	otherNS := st.MakePod("db-0").Namespace("other").Volume(usingClaim("db")).NodeName("node01").Obj()
	tests := []struct {
		name     string
		existing []*corev1.Pod // on node01
		claim    string
		want     framework.Code // of PreFilter, then of Filter on node02 if PreFilter succeeds
		wantMsg  string
	}{
		{"a ReadWriteOncePod claim another pod uses rejects every node, not only that pod's", []*corev1.Pod{holder}, "db",
			framework.Unschedulable, ErrReasonReadWriteOncePodConflict},
		{"a ReadWriteOncePod claim nobody uses is free, and the filter is skipped", nil, "db", framework.Skip, ""},
		{"the claim of the same name in another namespace is another claim", []*corev1.Pod{otherNS}, "db", framework.Skip, ""},
		{"a ReadWriteOnce claim may be shared by pods", []*corev1.Pod{st.MakePod("a").Volume(usingClaim("share")).NodeName("node01").Obj()}, "share",
			framework.Skip, ""},
		{"a claim that does not exist rejects the pod in PreFilter", nil, "missing",
			framework.UnschedulableAndUnresolvable, `persistentvolumeclaim "missing" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snapshot := cache.NewSnapshot(st.NodeInfo(st.MakeNode("node01").Obj(), tt.existing...), st.NodeInfo(st.MakeNode("node02").Obj()))
			pl, state := New(framework.Handle{Storage: storage}), framework.NewCycleState()
			pod := framework.NewPodInfo(st.MakePod("db-1").Volume(usingClaim(tt.claim)).Obj())
			got := pl.PreFilter(state, pod, snapshot)
			if got.IsSuccess() {
				node02, _ := snapshot.Get("node02")
				got = pl.Filter(state, pod, node02)
			}
			if got.Code() != tt.want || got.Message() != tt.wantMsg && tt.wantMsg != "" {
				t.Errorf("got %v %q, want %v %q", got.Code(), got.Message(), tt.want, tt.wantMsg)
			}
		})
	}
}

func TestPreemptingTheHolderOfAReadWriteOncePodClaimFreesIt(t *testing.T) {
	storage := claims{"default/db": pvc("default", "db", corev1.ReadWriteOncePod)}
	holder := st.MakePod("db-0").Volume(usingClaim("db")).NodeName("node01").Obj()
	snapshot := cache.NewSnapshot(st.NodeInfo(st.MakeNode("node01").Obj(), holder))
	pl, state := New(framework.Handle{Storage: storage}), framework.NewCycleState()
	pod := framework.NewPodInfo(st.MakePod("db-1").Volume(usingClaim("db")).Obj())
	node01, _ := snapshot.Get("node01")
	if s := pl.PreFilter(state, pod, snapshot); !s.IsSuccess() {
		t.Fatalf("PreFilter: %v", s.Code())
	}
	clone := state.Clone()
	pl.RemovePod(clone, pod, framework.NewPodInfo(holder), node01)
	if s := pl.Filter(clone, pod, node01); !s.IsSuccess() {
		t.Errorf("without the holder: %q", s.Message())
	}
	if s := pl.Filter(state, pod, node01); s.Message() != ErrReasonReadWriteOncePodConflict {
		t.Errorf("the cycle's own state changed with the clone's: %q", s.Message())
	}
}
