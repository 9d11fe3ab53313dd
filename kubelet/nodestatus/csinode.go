package nodestatus

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/csitranslation"
)

// The node's CSINode (storage.k8s.io/v1), as a kubelet's CSI node info
// manager writes it when a CSI driver registers on the node: one object
// named after the node and owned by its Node, listing each driver with the
// ID it knows the node by, the topology keys it labels the node with and
// how many of its volumes the node can have (allocatable.count). The
// scheduler's NodeVolumeLimits counts against that number.
//
// mkube runs no CSI driver; its provisioner mkube.io/hostpath stands in
// for one, hostpath.csi.mkube.io (package internal/csitranslation), whose
// volumes may reach any node, so the kubelet registers that driver itself
// right after its Node:
//
//	name: node01            ownerReferences: [{apiVersion: v1, kind: Node, name: node01, uid: ...}]
//	spec.drivers:
//	- name: hostpath.csi.mkube.io
//	  nodeID: node01
//	  topologyKeys: [kubernetes.io/hostname]
//	  allocatable: {count: 1}      --max-volumes 1; none with 0, the default:
//	                               no limit, as the CSI hostpath driver's maxVolumesPerNode=0

var csiNodeTypeMeta = metav1.TypeMeta{APIVersion: storagev1.SchemeGroupVersion.String(), Kind: "CSINode"}

// csiNodeAttempts bounds syncCSINode's tries: a conflict with another
// writer clears at the next; an API server that keeps refusing is logged,
// and the node runs on without a CSINode (no volume limit), rather than
// never becoming ready.
const csiNodeAttempts = 5

// hostPathDriver is the node's entry for mkube's driver.
func hostPathDriver(nodeName string, maxVolumes int32) storagev1.CSINodeDriver {
	d := storagev1.CSINodeDriver{Name: csitranslation.HostPathDriver, NodeID: nodeName,
		TopologyKeys: []string{corev1.LabelHostname}}
	if maxVolumes > 0 {
		d.Allocatable = &storagev1.VolumeNodeResources{Count: &maxVolumes}
	}
	return d
}

// newCSINode is the CSINode a node's kubelet creates: owned by the Node,
// so that deleting the Node deletes it too.
func newCSINode(node *corev1.Node, driver storagev1.CSINodeDriver) *storagev1.CSINode {
	return &storagev1.CSINode{TypeMeta: csiNodeTypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: node.Name, OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{driver}}}
}

// ownedBy reports whether n is node's (Kubernetes' nodeOwnsCSINode): one
// left by an earlier Node of the same name has that Node's uid.
func ownedBy(n *storagev1.CSINode, node *corev1.Node) bool {
	return slices.ContainsFunc(n.OwnerReferences, func(r metav1.OwnerReference) bool {
		return r.Kind == "Node" && r.Name == node.Name && r.UID == node.UID
	})
}

// csiNodeChange is what syncCSINode has to do with the CSINode it found.
type csiNodeChange int

const (
	csiNodeUpToDate csiNodeChange = iota
	// csiNodeUpdate: the driver is missing or its count differs, which an
	// update may change.
	csiNodeUpdate
	// csiNodeReplace: an earlier Node's, or the driver's node ID or
	// topology keys differ, which are immutable: delete it and create it
	// anew (Kubernetes deletes a CSINode another Node owns).
	csiNodeReplace
)

// changeFor compares the CSINode found with the driver wanted.
func changeFor(n *storagev1.CSINode, node *corev1.Node, want storagev1.CSINodeDriver) csiNodeChange {
	if !ownedBy(n, node) {
		return csiNodeReplace
	}
	i := slices.IndexFunc(n.Spec.Drivers, func(d storagev1.CSINodeDriver) bool { return d.Name == want.Name })
	switch {
	case i < 0:
		return csiNodeUpdate
	case n.Spec.Drivers[i].NodeID != want.NodeID || !slices.Equal(n.Spec.Drivers[i].TopologyKeys, want.TopologyKeys):
		return csiNodeReplace
	case !equality.Semantic.DeepEqual(n.Spec.Drivers[i].Allocatable, want.Allocatable):
		return csiNodeUpdate
	}
	return csiNodeUpToDate
}

// withDriver is n with want in place of its namesake (or added), the
// other drivers kept.
func withDriver(n *storagev1.CSINode, want storagev1.CSINodeDriver) *storagev1.CSINode {
	out := n.DeepCopy()
	out.Spec.Drivers = slices.DeleteFunc(out.Spec.Drivers, func(d storagev1.CSINodeDriver) bool { return d.Name == want.Name })
	out.Spec.Drivers = append(out.Spec.Drivers, want)
	return out
}

// syncCSINode writes the node's CSINode for mkube's driver: creates it,
// updates it if its count differs, or replaces it if it is an earlier
// Node's. It runs as the node (Options.Client: a fleet's impersonates it), whom
// the Node authorizer lets get, create, update and delete its own CSINode
// only, and tries csiNodeAttempts times.
func (m *Manager) syncCSINode(ctx context.Context) error {
	return ensureCSINode(ctx, m.o.Client, m.node, m.o.MaxVolumes, m.o.Clock, m.o.Log)
}

func ensureCSINode(ctx context.Context, c *client.Client, node *corev1.Node, maxVolumes int32, clk clock.Clock, log *slog.Logger) error {
	want := hostPathDriver(node.Name, maxVolumes)
	backoff := registerInitialBackoff
	var err error
	for range csiNodeAttempts {
		if err = tryEnsureCSINode(ctx, c, node, want, log); err == nil || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-clk.After(backoff):
		}
		backoff = min(2*backoff, registerMaxBackoff)
	}
	return err
}

func tryEnsureCSINode(ctx context.Context, c *client.Client, node *corev1.Node, want storagev1.CSINodeDriver, log *slog.Logger) error {
	cur := &storagev1.CSINode{}
	err := c.Get(ctx, client.CSINodes, "", node.Name, cur)
	switch {
	case apierrors.IsNotFound(err):
		return createCSINode(ctx, c, node, want, log)
	case err != nil:
		return fmt.Errorf("get CSINode: %w", err)
	}
	switch changeFor(cur, node, want) {
	case csiNodeUpToDate:
		return nil
	case csiNodeReplace:
		uid := cur.UID
		err := c.Delete(ctx, client.CSINodes, "", node.Name, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete CSINode of an earlier node: %w", err)
		}
		return createCSINode(ctx, c, node, want, log)
	}
	if err := c.Update(ctx, client.CSINodes, "", node.Name, withDriver(cur, want), &storagev1.CSINode{}); err != nil {
		return fmt.Errorf("update CSINode: %w", err) // a conflict is retried
	}
	log.Info("updated CSINode", "driver", want.Name, "allocatable", allocatableCount(want))
	return nil
}

func createCSINode(ctx context.Context, c *client.Client, node *corev1.Node, want storagev1.CSINodeDriver, log *slog.Logger) error {
	if err := c.Create(ctx, client.CSINodes, "", newCSINode(node, want), &storagev1.CSINode{}); err != nil {
		return fmt.Errorf("create CSINode: %w", err) // AlreadyExists: someone was faster; read it again
	}
	log.Info("created CSINode", "driver", want.Name, "allocatable", allocatableCount(want))
	return nil
}

// allocatableCount is the driver's count for the log: "none" is no limit.
func allocatableCount(d storagev1.CSINodeDriver) string {
	if d.Allocatable == nil || d.Allocatable.Count == nil {
		return "none"
	}
	return fmt.Sprint(*d.Allocatable.Count)
}
