// Package protection is the pvc-protection and pv-protection controllers
// of kube-controller-manager (seed 003 §五, Using): every claim and volume
// is created with a finalizer (the StorageObjectInUseProtection admission
// plugin adds it, these controllers add it to older ones), so deleting
// one only marks it Terminating. The finalizer is removed, and the
// deletion finishes, once nothing uses it any more: for a claim, no pod
// scheduled to a node names it in its volumes (a pod not on a node yet
// will not start with a claim being deleted: the kubelet refuses it); for
// a volume, it is not Bound (its claim went first).
//
// Where things live:
//
//	file           what it holds
//	protection.go  what both controllers share: whether an object needs the finalizer, can lose it, and the write
//	claims.go      ClaimController, pvc-protection: a claim goes once no pod on a node uses it
//	volumes.go     VolumeController, pv-protection: a volume goes once it is not Bound
package protection

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The names the controller manager runs the two controllers by, and the
// keys of their service accounts (bootstrappolicy.ControllerServiceAccounts).
const (
	ClaimControllerName  = "persistentvolumeclaim-protection-controller"
	VolumeControllerName = "persistentvolume-protection-controller"
)

// needsFinalizer: a live object without the finalizer.
func needsFinalizer(m metav1.Object, finalizer string) bool {
	return m.GetDeletionTimestamp() == nil && !slices.Contains(m.GetFinalizers(), finalizer)
}

// deletionCandidate: an object being deleted that waits for the finalizer.
func deletionCandidate(m metav1.Object, finalizer string) bool {
	return m.GetDeletionTimestamp() != nil && slices.Contains(m.GetFinalizers(), finalizer)
}

// withFinalizer returns the finalizers with f added (add) or removed.
func withFinalizer(finalizers []string, f string, add bool) []string {
	out := slices.DeleteFunc(slices.Clone(finalizers), func(s string) bool { return s == f })
	if add {
		out = append(out, f)
	}
	return out
}

// updateFinalizers writes obj with its finalizer added or removed;
// write is the PUT, with obj's resourceVersion (Conflict: retried).
func updateFinalizers[T metav1.Object](ctx context.Context, obj T, f string, add bool, write func(context.Context, T) error) error {
	obj.SetFinalizers(withFinalizer(obj.GetFinalizers(), f, add))
	if err := write(ctx, obj); err != nil {
		verb := "remove"
		if add {
			verb = "add"
		}
		return fmt.Errorf("%s finalizer %s: %w", verb, f, err)
	}
	return nil
}
