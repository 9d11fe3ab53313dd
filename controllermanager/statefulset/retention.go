package statefulset

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// spec.persistentVolumeClaimRetentionPolicy decides whether a pod's claims
// outlive it. The controller never deletes a claim itself: it gives the
// claim an ownerReference and lets the garbage collector do it when the
// owner goes (Kubernetes' isClaimOwnerUpToDate):
//
//	whenScaled  whenDeleted  the claim of a pod in range   of a condemned pod
//	Retain      Retain       no owner                      no owner
//	Retain      Delete       the set                       the set
//	Delete      Retain       no owner                      the pod
//	Delete      Delete       the set                       the pod
//
// So with whenDeleted=Delete, deleting the set deletes its claims; with
// whenScaled=Delete, the claim of a pod removed by a scale-down goes with
// the pod. A claim some other controller controls is left alone.

type retention = appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy

const (
	retain = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	remove = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
)

// retentionOf is the set's policy, Retain/Retain when unset.
func retentionOf(set *appsv1.StatefulSet) retention {
	if p := set.Spec.PersistentVolumeClaimRetentionPolicy; p != nil {
		return *p
	}
	return retention{WhenDeleted: retain, WhenScaled: retain}
}

// owner is the set or the pod, as a claim's ownerReference names it.
type owner struct {
	gvk  schema.GroupVersionKind
	name string
	uid  types.UID // "" for a pod not yet created
}

func setOwner(set *appsv1.StatefulSet) owner { return owner{controllerKind, set.Name, set.UID} }
func podOwner(pod *corev1.Pod) owner         { return owner{podKind, pod.Name, pod.UID} }

// names: the reference is to this kind and name, whatever the UID.
func (o owner) names(ref metav1.OwnerReference) bool {
	return ref.APIVersion == o.gvk.GroupVersion().String() && ref.Kind == o.gvk.Kind && ref.Name == o.name
}

// isOwnerOf: the claim has a reference to this very object (by UID).
func (o owner) isOwnerOf(claim *corev1.PersistentVolumeClaim) bool {
	for _, r := range claim.OwnerReferences {
		if r.UID == o.uid {
			return true
		}
	}
	return false
}

// staleIn: the claim names the owner but with another UID: a reference
// to an earlier set or pod of the same name, whose deletion the garbage
// collector is about to act on. Such a claim is not touched.
func (o owner) staleIn(claim *corev1.PersistentVolumeClaim) bool {
	for _, r := range claim.OwnerReferences {
		if o.names(r) {
			return r.UID != o.uid
		}
	}
	return false
}

// hasUnexpectedController: with a policy that deletes anything, a claim
// whose controller is neither the set nor the pod (or an earlier set or
// pod of that name) belongs to somebody else.
func hasUnexpectedController(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	if p := retentionOf(set); p.WhenScaled == retain && p.WhenDeleted == retain {
		return false
	}
	s, po := setOwner(set), podOwner(pod)
	for _, r := range claim.OwnerReferences {
		switch {
		case s.names(r):
			if r.UID != s.uid {
				return true
			}
		case po.names(r):
			if r.UID != po.uid {
				return true
			}
		case r.Controller != nil && *r.Controller:
			return true
		}
	}
	return false
}

// hasNonControllerOwner: the set or pod owns the claim without being its
// controller, which the policy's references always are.
func hasNonControllerOwner(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	for _, r := range claim.OwnerReferences {
		if (r.UID == set.UID || r.UID == pod.UID) && (r.Controller == nil || !*r.Controller) {
			return true
		}
	}
	return false
}

// claimOwnerUpToDate: the claim's references are what the table above
// says for this pod (Kubernetes' isClaimOwnerUpToDate).
func claimOwnerUpToDate(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, pod *corev1.Pod) bool {
	s, po := setOwner(set), podOwner(pod)
	if s.staleIn(claim) || po.staleIn(claim) {
		return true // an earlier owner's: leave it to the garbage collector
	}
	if hasUnexpectedController(claim, set, pod) {
		// Not ours: up to date once our own references are gone.
		return !s.isOwnerOf(claim) && !po.isOwnerOf(claim)
	}
	if hasNonControllerOwner(claim, set, pod) {
		return false
	}
	wantSet, wantPod := wantedOwners(set, pod)
	return s.isOwnerOf(claim) == wantSet && po.isOwnerOf(claim) == wantPod
}

// wantedOwners: whether the claim of pod should be owned by the set and by
// the pod, as the policy table says.
func wantedOwners(set *appsv1.StatefulSet, pod *corev1.Pod) (bySet, byPod bool) {
	p := retentionOf(set)
	scaledDown := !inOrdinalRange(pod, set)
	switch {
	case p.WhenScaled == retain && p.WhenDeleted == remove:
		return true, false
	case p.WhenScaled == remove && p.WhenDeleted == retain:
		return false, scaledDown
	case p.WhenScaled == remove && p.WhenDeleted == remove:
		return !scaledDown, scaledDown
	}
	return false, false // Retain/Retain, and any unknown policy
}

// setClaimOwners rewrites the claim's references to the set and the pod
// as the policy wants them; for a claim another controller has, it only
// removes ours (Kubernetes' updateClaimOwnerRefForSetAndPod).
func setClaimOwners(claim *corev1.PersistentVolumeClaim, set *appsv1.StatefulSet, pod *corev1.Pod) {
	s, po := setOwner(set), podOwner(pod)
	unexpected := hasUnexpectedController(claim, set, pod)
	var refs []metav1.OwnerReference
	for _, r := range claim.OwnerReferences {
		if !s.names(r) && !po.names(r) {
			refs = append(refs, r)
		}
	}
	if !unexpected {
		bySet, byPod := wantedOwners(set, pod)
		if bySet {
			refs = addControllerRef(refs, set, controllerKind)
		}
		if byPod && pod.UID != "" {
			refs = addControllerRef(refs, pod, podKind)
		}
	}
	claim.OwnerReferences = refs
}

// addControllerRef adds o as controller unless the list already names it
// (the table never wants both the set and the pod: one controller each).
func addControllerRef(refs []metav1.OwnerReference, o metav1.Object, gvk schema.GroupVersionKind) []metav1.OwnerReference {
	for _, r := range refs {
		if r.UID == o.GetUID() {
			return refs
		}
	}
	return append(refs, *metav1.NewControllerRef(o, gvk))
}
