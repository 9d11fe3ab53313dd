package kubelet

import (
	"context"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
)

// leaseDurationSeconds is the kubelet's --node-lease-duration-seconds
// default. Renewing every 10s leaves room for three missed renewals before
// the lease expires.
const leaseDurationSeconds = 40

// renewLease creates or renews the node's Lease in kube-node-lease: the
// cheap heartbeat (KEP-589). Writing a small Lease every 10s costs the API
// server far less than a whole Node status with its images, so the node
// lifecycle controller reads the Lease to decide whether a node is alive.
func (k *Kubelet) renewLease(ctx context.Context) error {
	// The lease last written is renewed as it is, without reading it
	// first, as the kubelet's lease controller does: one request per
	// renewal. A conflict (someone else wrote it) reads it again.
	if k.lease != nil {
		next := k.lease.DeepCopy()
		next.Spec = k.newLease().Spec
		err := k.client.Update(ctx, client.Leases, corev1.NamespaceNodeLease, k.cfg.NodeName, next, next)
		if err == nil {
			k.lease = next
			k.log.Debug("renewed node lease")
			return nil
		}
		k.lease = nil
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return fmt.Errorf("renew lease: %w", err)
		}
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		lease := &coordinationv1.Lease{}
		err := k.client.Get(ctx, client.Leases, corev1.NamespaceNodeLease, k.cfg.NodeName, lease)
		if apierrors.IsNotFound(err) {
			created := &coordinationv1.Lease{}
			if err := k.client.Create(ctx, client.Leases, corev1.NamespaceNodeLease, k.newLease(), created); err != nil {
				return fmt.Errorf("create lease: %w", err)
			}
			k.lease = created
			k.log.Info("created node lease", "namespace", corev1.NamespaceNodeLease, "durationSeconds", leaseDurationSeconds)
			return nil
		}
		if err != nil {
			return fmt.Errorf("get lease: %w", err)
		}
		want := k.newLease()
		lease.Spec = want.Spec
		lease.OwnerReferences = want.OwnerReferences
		if err := k.client.Update(ctx, client.Leases, corev1.NamespaceNodeLease, k.cfg.NodeName, lease, lease); err != nil {
			return fmt.Errorf("renew lease: %w", err)
		}
		k.lease = lease
		k.log.Debug("renewed node lease")
		return nil
	})
}

// newLease is the node's Lease as of now. It is owned by the Node, so the
// garbage collector deletes it with the node.
func (k *Kubelet) newLease() *coordinationv1.Lease {
	return &coordinationv1.Lease{
		TypeMeta: metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: metav1.ObjectMeta{Name: k.cfg.NodeName, Namespace: corev1.NamespaceNodeLease,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: k.node.Name, UID: k.node.UID}}},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(k.cfg.NodeName),
			LeaseDurationSeconds: ptr.To[int32](leaseDurationSeconds),
			RenewTime:            &metav1.MicroTime{Time: k.clock.Now()},
		},
	}
}
