package nodestatus

import (
	"context"
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/csitranslation"
	"github.com/mkube/mkube/internal/testserver"
)

// testCluster is an API server on embedded etcd, as cmd/apiserver runs it.
func testCluster(t *testing.T) *client.Client {
	t.Helper()
	if testing.Short() {
		t.Skip("starts etcd and an API server")
	}
	return client.New(testserver.Start(t), "kubelet-test")
}

func TestTheCSINodeChangeTheKubeletMakes(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node01", UID: "uid-1"}}
	limited := hostPathDriver("node01", 3)
	other := storagev1.CSINodeDriver{Name: "ebs.csi.aws.com", NodeID: "i-123"}
	withDrivers := func(uid string, drivers ...storagev1.CSINodeDriver) *storagev1.CSINode {
		n := newCSINode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node01", UID: types.UID("uid-" + uid)}}, limited)
		n.Spec.Drivers = drivers
		return n
	}
	moved := hostPathDriver("node01", 3)
	moved.TopologyKeys = []string{corev1.LabelTopologyZone}
	tests := []struct {
		name  string
		found *storagev1.CSINode
		want  csiNodeChange
	}{
		{"the node's own CSINode with the driver and its count is up to date", withDrivers("1", other, limited), csiNodeUpToDate},
		{"a CSINode without mkube's driver gets it added", withDrivers("1", other), csiNodeUpdate},
		{"a different count is updated in place (allocatable is mutable)", withDrivers("1", hostPathDriver("node01", 5)), csiNodeUpdate},
		{"no count where one is wanted is updated too", withDrivers("1", hostPathDriver("node01", 0)), csiNodeUpdate},
		{"other topology keys cannot be updated: the CSINode is replaced", withDrivers("1", moved), csiNodeReplace},
		{"an earlier Node's CSINode, of another uid, is replaced", withDrivers("0", limited), csiNodeReplace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := changeFor(tt.found, node, limited); got != tt.want {
				t.Errorf("changeFor = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNoMaxVolumesIsNoAllocatableCount(t *testing.T) {
	if d := hostPathDriver("node01", 0); d.Allocatable != nil {
		t.Errorf("--max-volumes 0 gave allocatable %+v, want none (no limit)", d.Allocatable)
	}
	if d := hostPathDriver("node01", 2); d.Allocatable == nil || *d.Allocatable.Count != 2 {
		t.Errorf("--max-volumes 2 gave allocatable %+v", d.Allocatable)
	}
}

func TestTheKubeletWritesItsCSINode(t *testing.T) {
	c := testCluster(t)
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(t.Output(), nil))
	node := &corev1.Node{}
	if err := c.Create(ctx, client.Nodes, "", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node01"}}, node); err != nil {
		t.Fatal(err)
	}
	get := func() *storagev1.CSINode {
		t.Helper()
		n := &storagev1.CSINode{}
		if err := c.Get(ctx, client.CSINodes, "", "node01", n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	sync := func(node *corev1.Node, maxVolumes int32) {
		t.Helper()
		if err := ensureCSINode(ctx, c, node, maxVolumes, clock.RealClock{}, log); err != nil {
			t.Fatal(err)
		}
	}

	sync(node, 1)
	first := get()
	if len(first.OwnerReferences) != 1 || first.OwnerReferences[0].Kind != "Node" || first.OwnerReferences[0].UID != node.UID {
		t.Errorf("ownerReferences = %+v, want the Node", first.OwnerReferences)
	}
	want := storagev1.CSINodeDriver{Name: csitranslation.HostPathDriver, NodeID: "node01", TopologyKeys: []string{"kubernetes.io/hostname"},
		Allocatable: &storagev1.VolumeNodeResources{Count: ptr.To[int32](1)}}
	if d := first.Spec.Drivers; len(d) != 1 || d[0].Name != want.Name || d[0].NodeID != want.NodeID ||
		d[0].TopologyKeys[0] != want.TopologyKeys[0] || *d[0].Allocatable.Count != 1 {
		t.Errorf("drivers = %+v, want [%+v]", d, want)
	}

	sync(node, 1)
	if again := get(); again.ResourceVersion != first.ResourceVersion {
		t.Errorf("an up-to-date CSINode was written again: rv %s → %s", first.ResourceVersion, again.ResourceVersion)
	}

	sync(node, 0)
	if n := get(); n.UID != first.UID || n.Spec.Drivers[0].Allocatable != nil {
		t.Errorf("after --max-volumes 0: uid %s (was %s), allocatable %+v; want the same object, no count", n.UID, first.UID, n.Spec.Drivers[0].Allocatable)
	}

	// The Node deleted and registered again: a new uid, whose kubelet
	// replaces the CSINode the old one owned.
	reborn := node.DeepCopy()
	reborn.UID = "uid-of-a-new-node01"
	sync(reborn, 2)
	if n := get(); n.UID == first.UID || n.OwnerReferences[0].UID != reborn.UID || *n.Spec.Drivers[0].Allocatable.Count != 2 {
		t.Errorf("after the Node's uid changed: uid %s, owner %s, drivers %+v; want a new CSINode of the new Node", n.UID, n.OwnerReferences[0].UID, n.Spec.Drivers)
	}
}
