package volumezone

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// storage is a StorageLister over a few objects.
type storage struct {
	claims  map[string]*corev1.PersistentVolumeClaim
	volumes map[string]*corev1.PersistentVolume
	classes map[string]*storagev1.StorageClass
}

func (s storage) Claim(ns, name string) (*corev1.PersistentVolumeClaim, bool) {
	c, ok := s.claims[ns+"/"+name]
	return c, ok
}
func (s storage) Volume(name string) (*corev1.PersistentVolume, bool) {
	pv, ok := s.volumes[name]
	return pv, ok
}
func (s storage) Volumes() []*corev1.PersistentVolume { return nil }
func (s storage) Class(name string) (*storagev1.StorageClass, bool) {
	c, ok := s.classes[name]
	return c, ok
}

func pv(name string, labels map[string]string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func claim(name, volume, class string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: volume, StorageClassName: ptr.To(class)}}
}

func class(name string, mode storagev1.VolumeBindingMode) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, VolumeBindingMode: &mode}
}

func podUsing(claims ...string) *framework.PodInfo {
	p := st.MakePod("p")
	for _, c := range claims {
		p.Volume(corev1.Volume{Name: c, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	return framework.NewPodInfo(p.Obj())
}

func TestVolumeZone(t *testing.T) {
	s := storage{
		claims: map[string]*corev1.PersistentVolumeClaim{
			"default/in-a":      claim("in-a", "pv-a", ""),
			"default/in-ab":     claim("in-ab", "pv-ab", ""),
			"default/beta":      claim("beta", "pv-beta", ""),
			"default/nowhere":   claim("nowhere", "pv-none", ""),
			"default/waiting":   claim("waiting", "", "wait"),
			"default/immediate": claim("immediate", "", "fast"),
			"default/lost":      claim("lost", "pv-gone", ""),
		},
		volumes: map[string]*corev1.PersistentVolume{
			"pv-a":    pv("pv-a", map[string]string{corev1.LabelTopologyZone: "a"}),
			"pv-ab":   pv("pv-ab", map[string]string{corev1.LabelTopologyZone: "a__b"}),
			"pv-beta": pv("pv-beta", map[string]string{corev1.LabelFailureDomainBetaZone: "a"}),
			"pv-none": pv("pv-none", nil),
		},
		classes: map[string]*storagev1.StorageClass{
			"wait": class("wait", storagev1.VolumeBindingWaitForFirstConsumer),
			"fast": class("fast", storagev1.VolumeBindingImmediate),
		},
	}
	inA, inB, noZone := st.MakeNode("node01").Zone("a").Obj(), st.MakeNode("node02").Zone("b").Obj(), st.MakeNode("node03").Obj()
	tests := []struct {
		name      string
		claims    []string
		preFilter framework.Code
		msg       string
		fits      map[*corev1.Node]bool
	}{
		{"a volume in zone a fits nodes of zone a and nodes in no zone", []string{"in-a"}, framework.Success, "",
			map[*corev1.Node]bool{inA: true, inB: false, noZone: true}},
		{"a regional volume a__b fits both zones", []string{"in-ab"}, framework.Success, "",
			map[*corev1.Node]bool{inA: true, inB: true}},
		{"a volume's beta zone label is matched against the node's GA label", []string{"beta"}, framework.Success, "",
			map[*corev1.Node]bool{inA: true, inB: false}},
		{"a volume without zone labels skips the filter", []string{"nowhere"}, framework.Skip, "the pod's volumes are in no zone", nil},
		{"a pod without claims skips the filter", nil, framework.Skip, "the pod has no PersistentVolumeClaim", nil},
		{"an unbound WaitForFirstConsumer claim is VolumeBinding's", []string{"waiting"}, framework.Skip, "the pod's volumes are in no zone", nil},
		{"an unbound Immediate claim has no volume yet", []string{"immediate"}, framework.UnschedulableAndUnresolvable, "PersistentVolume had no name", nil},
		{"a missing claim is the lister's NotFound", []string{"gone"}, framework.UnschedulableAndUnresolvable, `persistentvolumeclaim "gone" not found`, nil},
		{"a claim bound to a missing volume is the lister's NotFound", []string{"lost"}, framework.UnschedulableAndUnresolvable, `persistentvolume "pv-gone" not found`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, state, pod := New(framework.Handle{Storage: s}), framework.NewCycleState(), podUsing(tt.claims...)
			got := pl.PreFilter(state, pod, nil)
			if got.Code() != tt.preFilter || (tt.msg != "" && got.Message() != tt.msg) {
				t.Fatalf("PreFilter = %v %q, want %v %q", got.Code(), got.Message(), tt.preFilter, tt.msg)
			}
			for node, fits := range tt.fits {
				f := pl.Filter(state, pod, st.NodeInfo(node))
				if f.IsSuccess() != fits || (!fits && f.Message() != ErrReasonConflict) {
					t.Errorf("%s: %v %q, want fits=%v", node.Name, f.Code(), f.Message(), fits)
				}
			}
		})
	}
}
