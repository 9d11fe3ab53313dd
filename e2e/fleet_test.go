package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// TestOneKubeletRunsManyNodes: `kubelet --node-name fake --nodes 3` is
// three nodes, fake-1 to fake-3, each with its Node, Lease and pods,
// from one process sharing one runtime.
func TestOneKubeletRunsManyNodes(t *testing.T) {
	t.Parallel()
	c := startClusterWithNodes(t, nil, kubeletNode{name: "fake", flags: []string{"--nodes", "3"}})
	k := newKubectl(t, c)
	testserver.EventuallyWithin(t, 30*time.Second, "3 Ready nodes fake-1..fake-3 with their leases", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "nodes", "-o", "jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=='Ready')].status} {end}")
		leases, _, _ := k.kubectl(t, "get", "leases", "-n", "kube-node-lease", "-o", "jsonpath={.items[*].metadata.name}")
		return out == "fake-1=True fake-2=True fake-3=True " && leases == "fake-1 fake-2 fake-3", out + " leases: " + leases
	})
	k.mustKubectl(t, "create", "deployment", "web", "--image=nginx:1.25", "--replicas=6")
	testserver.EventuallyWithin(t, 60*time.Second, "6 pods Running on the 3 nodes", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "pods", "-l", "app=web", "-o", "jsonpath={range .items[*]}{.status.phase}@{.spec.nodeName} {end}")
		nodes := map[string]int{}
		for _, f := range strings.Fields(out) {
			if phase, node, _ := strings.Cut(f, "@"); phase == "Running" {
				nodes[node]++
			}
		}
		return len(nodes) == 3 && nodes["fake-1"]+nodes["fake-2"]+nodes["fake-3"] == 6, out
	})
	pod := strings.Fields(k.mustKubectl(t, "get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].metadata.name}"))[0]
	testserver.EventuallyWithin(t, 30*time.Second, "kubectl logs reaches the pod through the fleet's one port", func() (bool, string) {
		out, _, _ := k.kubectl(t, "logs", pod)
		return strings.Contains(out, "start worker processes"), out
	})
	if out := k.mustKubectl(t, "get", "node", "fake-2", "-o", "jsonpath={.spec.podCIDR}"); out != "10.128.1.0/24" {
		t.Errorf("fake-2's podCIDR %q, want 10.128.1.0/24", out)
	}
}
