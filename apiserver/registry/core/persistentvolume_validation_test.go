package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func validVolume() *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv1"}, Spec: corev1.PersistentVolumeSpec{
		Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data/pv1"}},
	}}
}

func validClaim() *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		VolumeMode:  ptr.To(corev1.PersistentVolumeFilesystem),
	}}
}

// wantErrors checks that errs are exactly the "field: message" lines.
func wantErrors(t *testing.T, errs field.ErrorList, want []string) {
	t.Helper()
	var got []string
	for _, e := range errs {
		got = append(got, e.Field+": "+e.ErrorBody())
	}
	if len(got) != len(want) {
		t.Fatalf("got errors\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	for i := range got {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Fatalf("error %d is\n  %s\nwant it to start with\n  %s", i, got[i], want[i])
		}
	}
}

func TestAVolumeIsValidatedAsKubernetesValidatesIt(t *testing.T) {
	tests := []struct {
		name   string
		change func(pv *corev1.PersistentVolume)
		want   []string
	}{
		{"a hostPath volume with a size and an access mode is valid", func(*corev1.PersistentVolume) {}, nil},
		{"a volume needs a size", func(pv *corev1.PersistentVolume) { pv.Spec.Capacity = nil },
			[]string{"spec.capacity: Required value", `spec.capacity: Unsupported value: `}},
		{"and a size above zero", func(pv *corev1.PersistentVolume) {
			pv.Spec.Capacity[corev1.ResourceStorage] = resource.MustParse("0")
		}, []string{`spec.capacity[storage]: Invalid value: "0": must be greater than zero`}},
		{"a volume's capacity is storage only", func(pv *corev1.PersistentVolume) {
			pv.Spec.Capacity[corev1.ResourceCPU] = resource.MustParse("1")
		}, []string{"spec.capacity: Unsupported value"}},
		{"a volume needs an access mode", func(pv *corev1.PersistentVolume) { pv.Spec.AccessModes = nil },
			[]string{"spec.accessModes: Required value"}},
		{"an unknown access mode is refused", func(pv *corev1.PersistentVolume) {
			pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{"ReadSometimes"}
		},
			[]string{`spec.accessModes: Unsupported value: "ReadSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"`}},
		{"ReadWriteOncePod goes alone", func(pv *corev1.PersistentVolume) {
			pv.Spec.AccessModes = append(pv.Spec.AccessModes, corev1.ReadWriteOncePod)
		}, []string{"spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"}},
		{"a volume needs a source", func(pv *corev1.PersistentVolume) { pv.Spec.HostPath = nil },
			[]string{"spec: Required value: must specify a volume type"}},
		{"and only one", func(pv *corev1.PersistentVolume) {
			pv.Spec.NFS = &corev1.NFSVolumeSource{Server: "nfs1", Path: "/exports"}
		}, []string{"spec.nfs: Forbidden: may not specify more than 1 volume type"}},
		{"a source mkube cannot reach is accepted as it is", func(pv *corev1.PersistentVolume) {
			pv.Spec.HostPath, pv.Spec.ISCSI = nil, &corev1.ISCSIPersistentVolumeSource{TargetPortal: "10.0.0.1:3260"}
		}, nil},
		{"an unknown reclaim policy is refused", func(pv *corev1.PersistentVolume) { pv.Spec.PersistentVolumeReclaimPolicy = "Shred" },
			[]string{`spec.persistentVolumeReclaimPolicy: Unsupported value: "Shred": supported values: "Delete", "Recycle", "Retain"`}},
		{"recycling the hostPath / would wipe the node", func(pv *corev1.PersistentVolume) {
			pv.Spec.HostPath.Path, pv.Spec.PersistentVolumeReclaimPolicy = "/", corev1.PersistentVolumeReclaimRecycle
		}, []string{"spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'"}},
		{"a hostPath may not climb out with ..", func(pv *corev1.PersistentVolume) { pv.Spec.HostPath.Path = "/data/../etc" },
			[]string{`spec.hostPath.path: Invalid value: "/data/../etc": must not contain '..'`}},
		{"a local volume must say which node it is on", func(pv *corev1.PersistentVolume) {
			pv.Spec.HostPath, pv.Spec.Local = nil, &corev1.LocalVolumeSource{Path: "/mnt/disks/ssd1"}
		}, []string{"spec.nodeAffinity: Required value: Local volume requires node affinity"}},
		{"a local volume with its node is valid", func(pv *corev1.PersistentVolume) {
			pv.Spec.HostPath, pv.Spec.Local = nil, &corev1.LocalVolumeSource{Path: "/mnt/disks/ssd1"}
			pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"node01"}}}}}}}
		}, nil},
		{"node affinity needs its required terms", func(pv *corev1.PersistentVolume) { pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{} },
			[]string{"spec.nodeAffinity.required: Required value: must specify required node constraints"}},
		{"an nfs path is absolute", func(pv *corev1.PersistentVolume) {
			pv.Spec.HostPath, pv.Spec.NFS = nil, &corev1.NFSVolumeSource{Server: "nfs1", Path: "exports"}
		}, []string{`spec.nfs.path: Invalid value: "exports": must be an absolute path`}},
		{"a csi volume names its driver and its handle", func(pv *corev1.PersistentVolume) {
			pv.Spec.HostPath, pv.Spec.CSI = nil, &corev1.CSIPersistentVolumeSource{Driver: "Not_A_Driver!"}
		}, []string{`spec.csi.driver: Invalid value: "Not_A_Driver!"`, "spec.csi.volumeHandle: Required value"}},
		{"a class name is a DNS subdomain", func(pv *corev1.PersistentVolume) { pv.Spec.StorageClassName = "Fast_SSD" },
			[]string{`spec.storageClassName: Invalid value: "Fast_SSD"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pv := validVolume()
			tc.change(pv)
			wantErrors(t, ValidatePersistentVolume(pv), tc.want)
		})
	}
}

func TestAVolumesSourceModeAndNodeAreFixedOnceCreated(t *testing.T) {
	tests := []struct {
		name   string
		change func(pv *corev1.PersistentVolume)
		want   []string
	}{
		{"its size, its claim and its policy may change", func(pv *corev1.PersistentVolume) {
			pv.Spec.Capacity[corev1.ResourceStorage] = resource.MustParse("2Gi")
			pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "default", Name: "data"}
			pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
		}, nil},
		{"its source may not", func(pv *corev1.PersistentVolume) { pv.Spec.HostPath.Path = "/elsewhere" },
			[]string{"spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation"}},
		{"nor its volume mode", func(pv *corev1.PersistentVolume) { pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock) },
			[]string{"volumeMode: Invalid value: \"Block\": field is immutable"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := validVolume()
			old.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
			pv := old.DeepCopy()
			tc.change(pv)
			wantErrors(t, ValidatePersistentVolumeUpdate(pv, old), tc.want)
		})
	}
}

func TestAClaimIsValidatedAsKubernetesValidatesIt(t *testing.T) {
	tests := []struct {
		name   string
		change func(pvc *corev1.PersistentVolumeClaim)
		want   []string
	}{
		{"a claim with an access mode and a size is valid", func(*corev1.PersistentVolumeClaim) {}, nil},
		{"a claim needs an access mode", func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.AccessModes = nil },
			[]string{"spec.accessModes: Required value: at least 1 access mode is required"}},
		{"a claim must ask for storage", func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.Resources.Requests = nil },
			[]string{"spec.resources[storage]: Required value"}},
		{"more than none of it", func(pvc *corev1.PersistentVolumeClaim) {
			pvc.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("0")
		}, []string{`spec.resources[storage]: Invalid value: "0": must be greater than zero`}},
		{"a bad selector is refused", func(pvc *corev1.PersistentVolumeClaim) {
			pvc.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}}
		}, []string{`spec.selector.matchExpressions[0].operator: Invalid value: "Near"`}},
		{"an unknown volume mode is refused", func(pvc *corev1.PersistentVolumeClaim) {
			pvc.Spec.VolumeMode = ptr.To[corev1.PersistentVolumeMode]("Tape")
		},
			[]string{`spec.volumeMode: Unsupported value: "Tape": supported values: "Block", "Filesystem"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pvc := validClaim()
			tc.change(pvc)
			wantErrors(t, ValidatePersistentVolumeClaim(pvc), tc.want)
		})
	}
}

func TestAClaimIsFixedOnceCreatedButForItsVolumeItsClassAndItsGrowth(t *testing.T) {
	tests := []struct {
		name   string
		bound  bool
		change func(pvc *corev1.PersistentVolumeClaim)
		want   []string
	}{
		{"the controller sets volumeName once", false, func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.VolumeName = "pv1" }, nil},
		{"a claim without a class may get one later", false, func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.StorageClassName = ptr.To("standard") }, nil},
		{"access modes are fixed", false, func(pvc *corev1.PersistentVolumeClaim) {
			pvc.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
		}, []string{"spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"}},
		{"an unbound claim cannot change its size", false, func(pvc *corev1.PersistentVolumeClaim) {
			pvc.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
		}, []string{"spec: Forbidden: spec is immutable after creation"}},
		{"a bound claim may ask for more", true, func(pvc *corev1.PersistentVolumeClaim) {
			pvc.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
		}, nil},
		{"but not for less than it has", true, func(pvc *corev1.PersistentVolumeClaim) {
			pvc.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("512Mi")
		}, []string{"spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"}},
		{"a bound claim keeps its volume", true, func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.VolumeName = "pv2" },
			[]string{"spec: Forbidden: spec is immutable after creation"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := validClaim()
			if tc.bound {
				old.Spec.VolumeName = "pv1"
				old.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
					Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}
			}
			pvc := old.DeepCopy()
			tc.change(pvc)
			wantErrors(t, ValidatePersistentVolumeClaimUpdate(pvc, old), tc.want)
		})
	}
}

func TestAccessModesPrintAsKubectlShowsThem(t *testing.T) {
	tests := []struct {
		name  string
		modes []corev1.PersistentVolumeAccessMode
		want  string
	}{
		{"none is empty", nil, ""},
		{"one is its abbreviation", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}, "RWOP"},
		{"several come in a fixed order, once each", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany, corev1.ReadWriteOnce, corev1.ReadWriteMany, corev1.ReadOnlyMany}, "RWO,ROX,RWX"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := AccessModesString(tc.modes); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}
