package leaderelection

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// holderOf is who leads according to lease: "" for nobody (released, or
// never held).
func holderOf(lease *coordinationv1.Lease) string {
	return ptr.Deref(lease.Spec.HolderIdentity, "")
}

// durationOf is how long the others wait after they saw lease change:
// its own leaseDurationSeconds, as its holder wrote it, so that candidates
// configured differently still honour the holder's promise. A Lease
// without one (written by hand) gets ours.
func durationOf(lease *coordinationv1.Lease, ours time.Duration) time.Duration {
	if s := lease.Spec.LeaseDurationSeconds; s != nil && *s > 0 {
		return time.Duration(*s) * time.Second
	}
	return ours
}

// newLease is the Lease a candidate creates when there is none: it holds
// it from now, the first holder, so no transitions yet.
func newLease(namespace, name, identity string, duration time.Duration, now time.Time) *coordinationv1.Lease {
	t := metav1.NewMicroTime(now)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(identity),
			LeaseDurationSeconds: ptr.To(int32(duration / time.Second)),
			AcquireTime:          &t,
			RenewTime:            &t,
			LeaseTransitions:     ptr.To[int32](0),
		},
	}
}

// claimed is cur written as held by identity from now: a renewal if
// identity held it already (acquireTime and the transitions stay), a
// hand-over otherwise (acquired now, one more transition). cur is not
// changed; its resourceVersion goes with the copy, which is what makes
// the write conditional.
func claimed(cur *coordinationv1.Lease, identity string, duration time.Duration, now time.Time) *coordinationv1.Lease {
	next := cur.DeepCopy()
	t := metav1.NewMicroTime(now)
	if holderOf(cur) != identity {
		next.Spec.AcquireTime = &t
		next.Spec.LeaseTransitions = ptr.To(ptr.Deref(cur.Spec.LeaseTransitions, 0) + 1)
	}
	next.Spec.HolderIdentity = ptr.To(identity)
	next.Spec.LeaseDurationSeconds = ptr.To(int32(duration / time.Second))
	next.Spec.RenewTime = &t
	return next
}

// released is cur given up: no holder, and a duration of one second, as
// client-go writes it, so that a candidate that does not take "" for free
// waits one second, not fifteen. The transitions stay: the next holder
// counts its own.
func released(cur *coordinationv1.Lease, now time.Time) *coordinationv1.Lease {
	next := cur.DeepCopy()
	t := metav1.NewMicroTime(now)
	next.Spec.HolderIdentity = ptr.To("")
	next.Spec.LeaseDurationSeconds = ptr.To[int32](1)
	next.Spec.AcquireTime = &t
	next.Spec.RenewTime = &t
	return next
}
