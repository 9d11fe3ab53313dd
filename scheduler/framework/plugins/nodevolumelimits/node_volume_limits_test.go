package nodevolumelimits

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/internal/csitranslation"
	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// storage is a StorageLister and a CSINodeLister over a few objects.
type storage struct {
	claims   map[string]*corev1.PersistentVolumeClaim
	volumes  map[string]*corev1.PersistentVolume
	classes  map[string]*storagev1.StorageClass
	csiNodes map[string]*storagev1.CSINode
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
func (s storage) CSINode(name string) (*storagev1.CSINode, bool) {
	n, ok := s.csiNodes[name]
	return n, ok
}

// provisioned is a volume mkube's provisioner made.
func provisioned(name string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name,
		Annotations: map[string]string{storagehelpers.AnnDynamicallyProvisioned: csitranslation.HostPathProvisioner}}}
}

// csiVolume is a volume of a CSI driver with the given handle.
func csiVolume(name, driver, handle string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: handle}}}}
}

func claim(name, volume, class string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: volume, StorageClassName: ptr.To(class)}}
}

// csiNode limits each driver to its count; a negative count is a driver
// without one.
func csiNode(name string, counts map[string]int32) *storagev1.CSINode {
	n := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for driver, count := range counts {
		d := storagev1.CSINodeDriver{Name: driver, NodeID: name}
		if count >= 0 {
			d.Allocatable = &storagev1.VolumeNodeResources{Count: ptr.To(count)}
		}
		n.Spec.Drivers = append(n.Spec.Drivers, d)
	}
	return n
}

func podUsing(name string, claims ...string) *corev1.Pod {
	p := st.MakePod(name)
	for _, c := range claims {
		p.Volume(corev1.Volume{Name: c, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	return p.Obj()
}

// withEphemeral is pod p with a generic ephemeral volume "scratch",
// whose claim is <pod>-scratch.
func withEphemeral(p *corev1.Pod) *corev1.Pod {
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "scratch",
		VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}})
	return p
}

// ownedBy makes pod the claim's controller, as the ephemeral volume
// controller does.
func ownedBy(c *corev1.PersistentVolumeClaim, pod *corev1.Pod) *corev1.PersistentVolumeClaim {
	c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: ptr.To(true)}}
	return c
}

const (
	hostPath = csitranslation.HostPathDriver
	ebs      = "ebs.csi.aws.com"
)

func TestNodeVolumeLimits(t *testing.T) {
	mine := st.MakePod("mine").Obj()
	s := storage{
		claims: map[string]*corev1.PersistentVolumeClaim{
			"default/data-a":         claim("data-a", "pvc-a", "standard"),
			"default/data-b":         claim("data-b", "pvc-b", "standard"),
			"default/data-c":         claim("data-c", "", "standard"),
			"default/static":         claim("static", "pv-static", ""),
			"default/ebs-1":          claim("ebs-1", "pv-ebs-1", ""),
			"default/ebs-1-again":    claim("ebs-1-again", "pv-ebs-1-again", ""),
			"default/ebs-2":          claim("ebs-2", "pv-ebs-2", ""),
			"default/classless":      claim("classless", "", "gold"),
			"default/lost":           claim("lost", "pv-gone", "standard"),
			"default/mine-scratch":   ownedBy(claim("mine-scratch", "", "standard"), mine),
			"default/theirs-scratch": ownedBy(claim("theirs-scratch", "", "standard"), mine),
		},
		volumes: map[string]*corev1.PersistentVolume{
			"pvc-a":          provisioned("pvc-a"),
			"pvc-b":          provisioned("pvc-b"),
			"pv-static":      {ObjectMeta: metav1.ObjectMeta{Name: "pv-static"}},
			"pv-ebs-1":       csiVolume("pv-ebs-1", ebs, "vol-1"),
			"pv-ebs-1-again": csiVolume("pv-ebs-1-again", ebs, "vol-1"),
			"pv-ebs-2":       csiVolume("pv-ebs-2", ebs, "vol-2"),
		},
		classes: map[string]*storagev1.StorageClass{
			"standard": {ObjectMeta: metav1.ObjectMeta{Name: "standard"}, Provisioner: csitranslation.HostPathProvisioner},
		},
		csiNodes: map[string]*storagev1.CSINode{
			"full":      csiNode("full", map[string]int32{hostPath: 2}),
			"roomy":     csiNode("roomy", map[string]int32{hostPath: 2}),
			"unlimited": csiNode("unlimited", map[string]int32{hostPath: -1}),
			"ebs":       csiNode("ebs", map[string]int32{ebs: 1}),
		},
	}

	// full: two of mkube's volumes attached, its limit. roomy: one
	// volume used by two pods, and a pod whose claim is gone. ebs: one
	// EBS volume of one allowed. none: no CSINode. unlimited: a CSINode
	// whose driver gives no count.
	full := st.NodeInfo(st.MakeNode("full").Obj(), podUsing("a", "data-a"), podUsing("b", "data-b"))
	roomy := st.NodeInfo(st.MakeNode("roomy").Obj(), podUsing("a1", "data-a"), podUsing("a2", "data-a"), podUsing("g", "gone"))
	ebsNode := st.NodeInfo(st.MakeNode("ebs").Obj(), podUsing("e", "ebs-1"))
	none := st.NodeInfo(st.MakeNode("none").Obj(), podUsing("a", "data-a"), podUsing("b", "data-b"))
	unlimited := st.NodeInfo(st.MakeNode("unlimited").Obj(), podUsing("a", "data-a"), podUsing("b", "data-b"))

	tests := []struct {
		name      string
		pod       *corev1.Pod
		preFilter framework.Code
		msg       string
		fits      map[*framework.NodeInfo]bool
	}{
		{"a new claim of mkube's provisioner is one too many where its driver's limit is reached, and fits where a volume two pods share counts once",
			podUsing("p", "data-c"), framework.Success, "", map[*framework.NodeInfo]bool{full: false, roomy: true, none: true, unlimited: true, ebsNode: true}},
		{"a volume already attached to the node adds nothing", podUsing("p", "data-a"),
			framework.Success, "", map[*framework.NodeInfo]bool{full: true}},
		{"each of the pod's new volumes counts", podUsing("p", "data-b", "data-c"),
			framework.Success, "", map[*framework.NodeInfo]bool{roomy: false}},
		{"a CSI volume counts under spec.csi.driver", podUsing("p", "ebs-2"),
			framework.Success, "", map[*framework.NodeInfo]bool{ebsNode: false, full: true}},
		{"two volumes with the same driver and handle are one volume", podUsing("p", "ebs-1-again"),
			framework.Success, "", map[*framework.NodeInfo]bool{ebsNode: true}},
		{"a claim bound to a volume not in the cache counts under its class", podUsing("p", "lost"),
			framework.Success, "", map[*framework.NodeInfo]bool{full: false, roomy: true}},
		{"an ephemeral volume's claim counts when the pod owns it", withEphemeral(st.MakePod("mine").Obj()),
			framework.Success, "", map[*framework.NodeInfo]bool{full: false, roomy: true}},
		{"an ephemeral volume's claim that another pod owns is an error", withEphemeral(st.MakePod("theirs").Obj()),
			framework.Error, "PVC default/theirs-scratch was not created for pod default/theirs (pod is not owner)", nil},
		{"a pod without claims skips the filter", st.MakePod("p").Obj(),
			framework.Skip, "the pod has no PersistentVolumeClaim and no ephemeral volume", nil},
		{"a static volume belongs to no driver", podUsing("p", "static"),
			framework.Skip, "the pod's volumes belong to no CSI driver", nil},
		{"a claim not bound yet whose class is missing counts for no driver", podUsing("p", "classless"),
			framework.Skip, "the pod's volumes belong to no CSI driver", nil},
		{"a missing claim is the lister's NotFound", podUsing("p", "gone"),
			framework.UnschedulableAndUnresolvable, `looking up PVC default/gone: persistentvolumeclaim "gone" not found`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, state, pod := New(framework.Handle{Storage: s, CSINodes: s}), framework.NewCycleState(), framework.NewPodInfo(tt.pod)
			got := pl.PreFilter(state, pod, nil)
			if got.Code() != tt.preFilter || (tt.msg != "" && got.Message() != tt.msg) {
				t.Fatalf("PreFilter = %v %q, want %v %q", got.Code(), got.Message(), tt.preFilter, tt.msg)
			}
			for node, fits := range tt.fits {
				f := pl.Filter(state, pod, node)
				if f.IsSuccess() != fits || (!fits && (f.Code() != framework.Unschedulable || f.Message() != ErrReasonMaxVolumeCountExceeded)) {
					t.Errorf("%s: %v %q, want fits=%v", node.Node().Name, f.Code(), f.Message(), fits)
				}
			}
		})
	}
}

func TestWithoutCSINodesNoNodeLimitsItsVolumes(t *testing.T) {
	s := storage{claims: map[string]*corev1.PersistentVolumeClaim{"default/data": claim("data", "", "standard")},
		classes: map[string]*storagev1.StorageClass{"standard": {Provisioner: csitranslation.HostPathProvisioner}}}
	pl, state, pod := New(framework.Handle{Storage: s}), framework.NewCycleState(), framework.NewPodInfo(podUsing("p", "data"))
	if got := pl.PreFilter(state, pod, nil); !got.IsSuccess() {
		t.Fatalf("PreFilter = %v %q", got.Code(), got.Message())
	}
	if f := pl.Filter(state, pod, st.NodeInfo(st.MakeNode("node01").Obj())); !f.IsSuccess() {
		t.Errorf("Filter = %v %q, want fits", f.Code(), f.Message())
	}
}
