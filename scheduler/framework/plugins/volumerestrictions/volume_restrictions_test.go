package volumerestrictions

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

func gcePD(name string, readOnly bool) corev1.Volume {
	return corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{GCEPersistentDisk: &corev1.GCEPersistentDiskVolumeSource{PDName: name, ReadOnly: readOnly}}}
}

func ebs(id string, readOnly bool) corev1.Volume {
	return corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: id, ReadOnly: readOnly}}}
}

func rbd(monitors []string, pool, image string, readOnly bool) corev1.Volume {
	return corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{CephMonitors: monitors, RBDPool: pool, RBDImage: image, ReadOnly: readOnly}}}
}

func iscsi(iqn string, readOnly bool) corev1.Volume {
	return corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{IQN: iqn, TargetPortal: "10.0.0.1:3260", ReadOnly: readOnly}}}
}

func TestVolumeRestrictionsFilter(t *testing.T) {
	tests := []struct {
		name     string
		existing corev1.Volume // on a pod already on the node
		wanted   corev1.Volume
		conflict bool
	}{
		{"the same GCE PD mounted read-write by a pod on the node conflicts", gcePD("data", false), gcePD("data", true), true},
		{"the same GCE PD mounted read-only by both pods is shared", gcePD("data", true), gcePD("data", true), false},
		{"another GCE PD does not conflict", gcePD("data", false), gcePD("logs", false), false},
		{"the same EBS volume conflicts even if both are read-only", ebs("vol-1", true), ebs("vol-1", true), true},
		{"another EBS volume does not conflict", ebs("vol-1", false), ebs("vol-2", false), false},
		{"the same RBD image through a common monitor conflicts", rbd([]string{"m1", "m2"}, "rbd", "img", false), rbd([]string{"m2"}, "rbd", "img", false), true},
		{"the same RBD image read-only on both sides is shared", rbd([]string{"m1"}, "rbd", "img", true), rbd([]string{"m1"}, "rbd", "img", true), false},
		{"an RBD image of the same name behind other monitors is another image", rbd([]string{"m1"}, "rbd", "img", false), rbd([]string{"m9"}, "rbd", "img", false), false},
		{"the same iSCSI IQN conflicts", iscsi("iqn.2024-01.io.mkube:disk1", false), iscsi("iqn.2024-01.io.mkube:disk1", false), true},
		{"the same iSCSI IQN read-only on both sides is shared", iscsi("iqn.2024-01.io.mkube:disk1", true), iscsi("iqn.2024-01.io.mkube:disk1", true), false},
		{"disks of different types never conflict", gcePD("data", false), ebs("data", false), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := st.NodeInfo(st.MakeNode("node01").Obj(), st.MakePod("existing").Volume(tt.existing).NodeName("node01").Obj())
			pl, state, pi := New(framework.Handle{}), framework.NewCycleState(), framework.NewPodInfo(st.MakePod("p").Volume(tt.wanted).Obj())
			if s := pl.PreFilter(state, pi, nil); !s.IsSuccess() {
				t.Fatalf("PreFilter = %v", s.Code())
			}
			got := pl.Filter(state, pi, node)
			if got.IsSuccess() == tt.conflict {
				t.Fatalf("conflict = %v, want %v", !got.IsSuccess(), tt.conflict)
			}
			if tt.conflict && (got.Message() != ErrReasonDiskConflict || got.Code() != framework.Unschedulable) {
				t.Errorf("status = %v %q", got.Code(), got.Message())
			}
		})
	}
}

func TestPodsWithoutDisksSkipTheFilter(t *testing.T) {
	pod := st.MakePod("p").Volume(corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}).Obj()
	if s := New(framework.Handle{}).PreFilter(framework.NewCycleState(), framework.NewPodInfo(pod), nil); s.Code() != framework.Skip {
		t.Errorf("PreFilter = %v, want Skip", s.Code())
	}
}
