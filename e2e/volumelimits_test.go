package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// NodeVolumeLimits (MaxCSIVolumeCountPred) with the real kubectl: a
// kubelet started with --max-volumes 1 writes a CSINode that gives the
// driver of mkube's provisioner (hostpath.csi.mkube.io) an allocatable
// count of 1, and the scheduler then puts no second pod with a volume of
// its own on that node until the first one goes.
func TestANodeTakesNoMoreVolumesThanItsCSINodeAllows(t *testing.T) {
	t.Parallel()
	c := startClusterWith(t, clusterFlags{}, kubeletNode{name: "node01", flags: []string{"--max-volumes", "1"}})
	k := newKubectl(t, c)
	s := &seedRun{c: c, k: k}
	apply := func(name, yaml string) { k.mustKubectl(t, "apply", "-f", k.manifest(t, name+".yaml", yaml)) }

	var csiNode string
	testserver.EventuallyWithin(t, 30*time.Second, "kubectl get csinode node01 shows mkube's driver and its count", func() (bool, string) {
		out, errOut, _ := k.kubectl(t, "get", "csinode", "node01", "-o", "yaml")
		csiNode = out
		return strings.Contains(out, "name: hostpath.csi.mkube.io") && matches(`allocatable:\s+count: 1\n`, out) &&
			strings.Contains(out, "nodeID: node01") && strings.Contains(out, "- kubernetes.io/hostname") &&
			matches(`ownerReferences:\s+- apiVersion: v1\s+kind: Node\s+name: node01`, out), out + errOut
	})
	t.Logf("kubectl get csinode node01 -o yaml:\n%s", csiNode)
	if row := parseTable(t, k.mustKubectl(t, "get", "csinode")).row(t, "NAME", "node01"); row["DRIVERS"] != "1" {
		t.Errorf("kubectl get csinode: %v, want DRIVERS 1", row)
	}

	apply("first", claimOf("data-1", "", "ReadWriteOnce")+"---\n"+podUsing("first", "data-1", "", "Always", "sleep 3600"))
	if node := s.runningOn(t, "first"); node != "node01" {
		t.Fatalf("first runs on %s", node)
	}
	apply("second", claimOf("data-2", "", "ReadWriteOnce")+"---\n"+podUsing("second", "data-2", "", "Always", "sleep 3600"))
	// Unschedulable, so preemption looks, but first is no lower priority.
	msg := "0/1 nodes are available: 1 node(s) exceed max volume count. " +
		"preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.."
	s.pending(t, "second", msg)
	t.Logf("kubectl describe pod second:\n%s", k.mustKubectl(t, "describe", "pod", "second"))

	// first's volume detaches with it: second fits.
	k.mustKubectl(t, "delete", "pod", "first")
	if node := s.runningOn(t, "second"); node != "node01" {
		t.Fatalf("second runs on %s", node)
	}
}
