package quota

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

// Claims is the PersistentVolumeClaim evaluator (Kubernetes'
// pvcEvaluator): a claim costs "persistentvolumeclaims: 1", its object
// count and requests.storage, and the same again under its class's names,
// <class>.storageclass.storage.k8s.io/persistentvolumeclaims and
// <class>.storageclass.storage.k8s.io/requests.storage, so that a quota
// can limit the gold class alone. Worked example: a 1Gi claim of class
// gold costs {persistentvolumeclaims: 1, requests.storage: 1Gi,
// gold.storageclass.storage.k8s.io/persistentvolumeclaims: 1,
// gold.storageclass.storage.k8s.io/requests.storage: 1Gi,
// count/persistentvolumeclaims: 1}.
var Claims Evaluator = claimEvaluator{}

type claimEvaluator struct{}

var claimCountName = ObjectCountName(schema.GroupResource{Resource: "persistentvolumeclaims"})

// storageClassSuffix joins a class and a name: gold.storageclass.storage.k8s.io/requests.storage.
const storageClassSuffix = ".storageclass.storage.k8s.io/"

// ByStorageClass is the name of a claim resource limited to one class.
func ByStorageClass(class string, name corev1.ResourceName) corev1.ResourceName {
	return corev1.ResourceName(class + storageClassSuffix + string(name))
}

func (claimEvaluator) GroupResource() schema.GroupResource {
	return schema.GroupResource{Resource: "persistentvolumeclaims"}
}

// Handles creates and updates (a claim can be resized), and status
// updates that change what was allocated to it: an expansion that
// failed and was retried smaller gives storage back.
func (claimEvaluator) Handles(w Write) bool {
	switch w.Subresource {
	case "":
		return true
	case "status":
		return w.Old != nil && ClaimUsageChanged(w.Object.(*corev1.PersistentVolumeClaim), w.Old.(*corev1.PersistentVolumeClaim))
	}
	return false
}

// ClaimUsageChanged reports whether a status update changes a claim's
// cost: its allocated storage, or its volume attributes classes.
func ClaimUsageChanged(claim, old *corev1.PersistentVolumeClaim) bool {
	a, b := claim.Status.AllocatedResources.Storage(), old.Status.AllocatedResources.Storage()
	return a.Cmp(*b) != 0 || !attributesClasses(claim).Equal(attributesClasses(old))
}

func (claimEvaluator) Matching(names []corev1.ResourceName) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, name := range names {
		if claimNames.Has(name) || name == claimCountName ||
			strings.HasSuffix(string(name), storageClassSuffix+string(corev1.ResourcePersistentVolumeClaims)) ||
			strings.HasSuffix(string(name), storageClassSuffix+string(corev1.ResourceRequestsStorage)) {
			out = append(out, name)
		}
	}
	return out
}

// MatchesScope: claims fall in the VolumeAttributesClass scope by the
// classes they ask for, have, or are being moved to.
func (claimEvaluator) MatchesScope(sel corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error) {
	if sel.ScopeName != corev1.ResourceQuotaScopeVolumeAttributesClass {
		return false, nil
	}
	classes := attributesClasses(obj.(*corev1.PersistentVolumeClaim))
	if sel.Operator == corev1.ScopeSelectorOpExists {
		return classes.Len() > 0, nil
	}
	if classes.Len() == 0 {
		return selectorMatches(sel, "")
	}
	for _, class := range sets.List(classes) {
		if ok, err := selectorMatches(sel, class); err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

func attributesClasses(claim *corev1.PersistentVolumeClaim) sets.Set[string] {
	out := sets.New[string]()
	if n := claim.Spec.VolumeAttributesClassName; n != nil && *n != "" {
		out.Insert(*n)
	}
	if n := claim.Status.CurrentVolumeAttributesClassName; n != nil && *n != "" {
		out.Insert(*n)
	}
	if m := claim.Status.ModifyVolumeStatus; m != nil && m.TargetVolumeAttributesClassName != "" {
		out.Insert(m.TargetVolumeAttributesClassName)
	}
	return out
}

func (claimEvaluator) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }

func (claimEvaluator) Usage(obj runtime.Object, _ time.Time) (corev1.ResourceList, error) {
	claim := obj.(*corev1.PersistentVolumeClaim)
	out := corev1.ResourceList{corev1.ResourcePersistentVolumeClaims: one(), claimCountName: one()}
	class := storagehelpers.GetPersistentVolumeClaimClass(claim)
	if class != "" {
		out[ByStorageClass(class, corev1.ResourcePersistentVolumeClaims)] = one()
	}
	request, ok := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	if !ok {
		return out, nil
	}
	// Whole bytes: a request of 1.5 bytes would make status.used invalid.
	storage := request.DeepCopy()
	storage.RoundUp(0)
	// An expansion in progress (or failed) may hold more than the claim
	// now asks for: the larger counts.
	if allocated, ok := claim.Status.AllocatedResources[corev1.ResourceStorage]; ok && allocated.Cmp(storage) > 0 {
		storage = allocated.DeepCopy()
	}
	out[corev1.ResourceRequestsStorage] = storage
	if class != "" {
		out[ByStorageClass(class, corev1.ResourceRequestsStorage)] = storage.DeepCopy()
	}
	return out, nil
}
