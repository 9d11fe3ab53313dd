package nodelease

import (
	"context"
	"fmt"
	"log/slog"

	"k8s.io/utils/clock"

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

// Controller keeps one node's Lease: Renew is called by the node's
// heartbeat loop alone (and once at registration, before it starts), so
// the Lease last written needs no lock.
type Controller struct {
	client   *client.Client
	nodeName string
	node     func() *corev1.Node // the registered Node, the Lease's owner
	clock    clock.Clock
	log      *slog.Logger
	lease    *coordinationv1.Lease // the Lease last written
}

// NewController returns the lease controller of node nodeName, whose
// registered Node node returns.
func NewController(c *client.Client, nodeName string, node func() *corev1.Node, clk clock.Clock, log *slog.Logger) *Controller {
	return &Controller{client: c, nodeName: nodeName, node: node, clock: clk, log: log}
}

// Renew creates or renews the node's Lease in kube-node-lease: the
// cheap heartbeat (KEP-589). Writing a small Lease every 10s costs the API
// server far less than a whole Node status with its images, so the node
// lifecycle controller reads the Lease to decide whether a node is alive.
func (c *Controller) Renew(ctx context.Context) error {
	// The lease last written is renewed as it is, without reading it
	// first, as the kubelet's lease controller does: one request per
	// renewal. A conflict (someone else wrote it) reads it again.
	if c.lease != nil {
		next := c.lease.DeepCopy()
		next.Spec = c.newLease().Spec
		err := c.client.Update(ctx, client.Leases, corev1.NamespaceNodeLease, c.nodeName, next, next)
		if err == nil {
			c.lease = next
			c.log.Debug("renewed node lease")
			return nil
		}
		c.lease = nil
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return fmt.Errorf("renew lease: %w", err)
		}
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		lease := &coordinationv1.Lease{}
		err := c.client.Get(ctx, client.Leases, corev1.NamespaceNodeLease, c.nodeName, lease)
		if apierrors.IsNotFound(err) {
			created := &coordinationv1.Lease{}
			if err := c.client.Create(ctx, client.Leases, corev1.NamespaceNodeLease, c.newLease(), created); err != nil {
				return fmt.Errorf("create lease: %w", err)
			}
			c.lease = created
			c.log.Info("created node lease", "namespace", corev1.NamespaceNodeLease, "durationSeconds", leaseDurationSeconds)
			return nil
		}
		if err != nil {
			return fmt.Errorf("get lease: %w", err)
		}
		want := c.newLease()
		lease.Spec = want.Spec
		lease.OwnerReferences = want.OwnerReferences
		if err := c.client.Update(ctx, client.Leases, corev1.NamespaceNodeLease, c.nodeName, lease, lease); err != nil {
			return fmt.Errorf("renew lease: %w", err)
		}
		c.lease = lease
		c.log.Debug("renewed node lease")
		return nil
	})
}

// newLease is the node's Lease as of now. It is owned by the Node, so the
// garbage collector deletes it with the node.
func (c *Controller) newLease() *coordinationv1.Lease {
	return &coordinationv1.Lease{
		TypeMeta: metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: metav1.ObjectMeta{Name: c.nodeName, Namespace: corev1.NamespaceNodeLease,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: c.node().Name, UID: c.node().UID}}},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(c.nodeName),
			LeaseDurationSeconds: ptr.To[int32](leaseDurationSeconds),
			RenewTime:            &metav1.MicroTime{Time: c.clock.Now()},
		},
	}
}
