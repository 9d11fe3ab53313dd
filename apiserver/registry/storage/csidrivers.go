package storage

import (
	"strings"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/internal/csitranslation"
)

// CSIDrivers say how Kubernetes is to treat a CSI driver's volumes: must
// they be attached first (attachRequired: the attach/detach controller
// then makes a VolumeAttachment for each), does the driver want the pod's
// name and service account at mount (podInfoOnMount), may pods name its
// volumes inline (volumeLifecycleModes: Ephemeral), does it publish
// CSIStorageCapacities for the scheduler (storageCapacity). The object is
// named after the driver; a driver without one gets the defaults.
var CSIDrivers = &apiserver.Resource{
	GroupVersion: storagev1.SchemeGroupVersion, Name: "csidrivers", Kind: "CSIDriver",
	New:     func() runtime.Object { return &storagev1.CSIDriver{} },
	NewList: func() runtime.Object { return &storagev1.CSIDriverList{} },
	Default: func(obj runtime.Object) { defaultCSIDriver(&obj.(*storagev1.CSIDriver).Spec) },
	Validate: func(obj, old runtime.Object) field.ErrorList {
		d := obj.(*storagev1.CSIDriver)
		errs := validateCSIDriverSpec(&d.Spec, field.NewPath("spec"))
		if old != nil {
			errs = append(errs, validateCSIDriverUpdate(&d.Spec, &old.(*storagev1.CSIDriver).Spec)...)
		}
		return errs
	},
	// kube-apiserver's CSIDriver printer.
	Columns: []apiserver.Column{{Name: "AttachRequired", Type: "boolean"}, {Name: "PodInfoOnMount", Type: "boolean"},
		{Name: "StorageCapacity", Type: "boolean"}, {Name: "TokenRequests", Type: "string"},
		{Name: "RequiresRepublish", Type: "boolean"}, {Name: "Modes", Type: "string"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		d := obj.(*storagev1.CSIDriver)
		s := d.Spec
		tokens := "<unset>"
		if s.TokenRequests != nil {
			audiences := make([]string, 0, len(s.TokenRequests))
			for _, t := range s.TokenRequests {
				audiences = append(audiences, t.Audience)
			}
			tokens = strings.Join(audiences, ",")
		}
		modes := make([]string, 0, len(s.VolumeLifecycleModes))
		for _, m := range s.VolumeLifecycleModes {
			modes = append(modes, string(m))
		}
		return []any{ptr.Deref(s.AttachRequired, true), ptr.Deref(s.PodInfoOnMount, false), ptr.Deref(s.StorageCapacity, false),
			tokens, ptr.Deref(s.RequiresRepublish, false), joinOrNone(modes), apiserver.Age(d.CreationTimestamp, now)}
	},
	Bootstrap: []runtime.Object{hostPathCSIDriver},
}

// hostPathCSIDriver is the CSIDriver of the driver mkube's provisioner
// stands for (package internal/csitranslation), the one each kubelet
// reports in its CSINode, as a cluster with a CSI driver installed lists
// it (kind's and minikube's hostpath drivers come with theirs). Its
// volumes are directories the kubelet reaches without attaching them
// (attachRequired false, so no VolumeAttachments) and it wants nothing
// of the pod at mount (podInfoOnMount false). The rest are the defaults.
var hostPathCSIDriver = func() *storagev1.CSIDriver {
	d := &storagev1.CSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: csitranslation.HostPathDriver},
		Spec:       storagev1.CSIDriverSpec{AttachRequired: ptr.To(false), PodInfoOnMount: ptr.To(false)},
	}
	defaultCSIDriver(&d.Spec)
	return d
}()

// defaultCSIDriver is Kubernetes' SetDefaults_CSIDriver. seLinuxMount and
// preventPodSchedulingIfMissing are defaulted because their gates,
// SELinuxMountReadWriteOncePod and VolumeLimitScaling, are on in v1.37.
func defaultCSIDriver(s *storagev1.CSIDriverSpec) {
	for _, b := range []**bool{&s.PodInfoOnMount, &s.StorageCapacity, &s.RequiresRepublish, &s.SELinuxMount, &s.PreventPodSchedulingIfMissing} {
		if *b == nil {
			*b = ptr.To(false)
		}
	}
	if s.AttachRequired == nil {
		s.AttachRequired = ptr.To(true)
	}
	if s.FSGroupPolicy == nil {
		s.FSGroupPolicy = ptr.To(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)
	}
	if len(s.VolumeLifecycleModes) == 0 {
		s.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}
	}
}

var (
	fsGroupPolicies = sets.New(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy, storagev1.FileFSGroupPolicy, storagev1.NoneFSGroupPolicy)
	lifecycleModes  = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent, storagev1.VolumeLifecycleEphemeral}
)

// Kubernetes' bounds on a token the kubelet asks for a driver (10
// minutes to 2^32 seconds, as a TokenRequest's) and on how often the
// kubelet refreshes the driver's allocatable count in the CSINode.
const (
	minTokenSeconds          = 10 * 60
	maxTokenSeconds          = 1 << 32
	minAllocatableUpdateSecs = 10
)

// validateCSIDriverSpec is Kubernetes' validateCSIDriverSpec (the name,
// a DNS subdomain, is checked with the other metadata). The booleans
// defaulting fills are required; Kubernetes' path for attachRequired is
// "attachedRequired", kept here so the messages match.
func validateCSIDriverSpec(s *storagev1.CSIDriverSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, b := range []struct {
		name string
		v    *bool
	}{{"attachedRequired", s.AttachRequired}, {"podInfoOnMount", s.PodInfoOnMount}, {"storageCapacity", s.StorageCapacity},
		{"seLinuxMount", s.SELinuxMount}, {"preventPodSchedulingIfMissing", s.PreventPodSchedulingIfMissing}} {
		if b.v == nil {
			errs = append(errs, field.Required(path.Child(b.name), ""))
		}
	}
	if p := s.FSGroupPolicy; p != nil && !fsGroupPolicies.Has(*p) {
		errs = append(errs, field.NotSupported(path.Child("fsGroupPolicy"), *p, sets.List(fsGroupPolicies)))
	}
	errs = append(errs, validateTokenRequests(s.TokenRequests, path.Child("tokenRequests"))...)
	for _, m := range s.VolumeLifecycleModes {
		if m != storagev1.VolumeLifecyclePersistent && m != storagev1.VolumeLifecycleEphemeral {
			errs = append(errs, field.NotSupported(path.Child("volumeLifecycleModes"), m, lifecycleModes))
		}
	}
	if p := s.NodeAllocatableUpdatePeriodSeconds; p != nil && *p < minAllocatableUpdateSecs {
		errs = append(errs, field.Invalid(path.Child("nodeAllocatableUpdatePeriodSeconds"), *p, "must be greater than or equal to 10 seconds"))
	}
	if s.ServiceAccountTokenInSecrets != nil && len(s.TokenRequests) == 0 {
		errs = append(errs, field.Invalid(path.Child("serviceAccountTokenInSecrets"), s.ServiceAccountTokenInSecrets,
			"serviceAccountTokenInSecrets is set but no tokenRequests are specified"))
	}
	return errs
}

// validateTokenRequests is Kubernetes' validateTokenRequests: one token
// per audience (at most one with none), each living 10 minutes to 2^32
// seconds.
func validateTokenRequests(reqs []storagev1.TokenRequest, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	audiences := sets.New[string]()
	for i, r := range reqs {
		p := path.Index(i)
		if audiences.Has(r.Audience) {
			errs = append(errs, field.Duplicate(p.Child("audience"), r.Audience))
			continue
		}
		audiences.Insert(r.Audience)
		if r.ExpirationSeconds == nil {
			continue
		}
		if s := *r.ExpirationSeconds; s < minTokenSeconds {
			errs = append(errs, field.Invalid(p.Child("expirationSeconds"), s, "may not specify a duration less than 10 minutes"))
		} else if s > maxTokenSeconds {
			errs = append(errs, field.Invalid(p.Child("expirationSeconds"), s, "may not specify a duration larger than 2^32 seconds"))
		}
	}
	return errs
}

// validateCSIDriverUpdate is the rest of Kubernetes' ValidateCSIDriverUpdate:
// whether volumes are attached, and how they may be used, are fixed once
// the driver is known, since existing volumes were set up that way. The
// rest (podInfoOnMount, storageCapacity, tokenRequests...) may change.
func validateCSIDriverUpdate(s, old *storagev1.CSIDriverSpec) field.ErrorList {
	errs := apivalidation.ValidateImmutableField(s.AttachRequired, old.AttachRequired, field.NewPath("spec", "attachedRequired"))
	return append(errs, apivalidation.ValidateImmutableField(s.VolumeLifecycleModes, old.VolumeLifecycleModes, field.NewPath("spec", "volumeLifecycleModes"))...)
}

// joinOrNone joins a list as kubectl prints one: "<none>" when empty.
func joinOrNone(items []string) string {
	if len(items) == 0 {
		return "<none>"
	}
	return strings.Join(items, ",")
}
