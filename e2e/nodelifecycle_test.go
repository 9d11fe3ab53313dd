package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/internal/podcondition"
	"github.com/mkube/mkube/internal/testserver"
)

// A node whose kubelet dies: the node lifecycle controller marks it
// NotReady and taints it unreachable (seed 003 section 6.5), the taint
// eviction controller evicts its pods once their toleration runs out, and
// the ReplicaSet's replacements run on the other node. When the kubelet
// comes back, the taints go. The grace periods are shortened by flag
// (Kubernetes: a 50s grace period and a 300s default toleration).
func TestNodeLifecycleAKubeletDiesAndItsPodsMove(t *testing.T) {
	t.Parallel()
	node02 := kubeletNode{name: "node02", flags: []string{"--status-interval", "500ms"}}
	c := startClusterWith(t, clusterFlags{controllerManager: []string{"--node-monitor-period", "500ms", "--node-monitor-grace-period", "3s"}},
		kubeletNode{name: "node01", flags: []string{"--status-interval", "500ms"}}, node02)
	k := newKubectl(t, c)
	testserver.EventuallyWithin(t, 30*time.Second, "2 nodes Ready", func() (bool, string) {
		out, errOut, code := k.kubectl(t, "get", "nodes", "--no-headers")
		return code == 0 && strings.Count(out, " Ready ") == 2, out + errOut
	})

	// Both replicas on node02: cordon node01 while they are placed. They
	// tolerate unreachable for 2s instead of the default 300s.
	k.mustKubectl(t, "cordon", "node01")
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "edge.yaml", `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: edge
spec:
  replicas: 2
  selector:
    matchLabels:
      app: edge
  template:
    metadata:
      labels:
        app: edge
    spec:
      tolerations:
      - key: node.kubernetes.io/unreachable
        operator: Exists
        effect: NoExecute
        tolerationSeconds: 2
      containers:
      - name: c
        image: nginx:1.25
`))
	var before []corev1.Pod
	testserver.EventuallyWithin(t, 30*time.Second, "2 edge pods Running on node02", func() (bool, string) {
		pods, ok := c.running("app%3Dedge", 2)
		before = pods
		return ok && pods[0].Spec.NodeName == "node02" && pods[1].Spec.NodeName == "node02", podStates(pods)
	})
	k.mustKubectl(t, "uncordon", "node01")

	if err := c.procs["kubelet-node02"].Kill(); err != nil {
		t.Fatal(err)
	}

	testserver.EventuallyWithin(t, 30*time.Second, "node02 NotReady and tainted unreachable", func() (bool, string) {
		out, errOut, code := k.kubectl(t, "get", "node", "node02", "-o", "jsonpath={.status.conditions[?(@.type==\"Ready\")].status} {.spec.taints[*].key}:{.spec.taints[*].effect}")
		return code == 0 && strings.HasPrefix(out, "Unknown node.kubernetes.io/unreachable node.kubernetes.io/unreachable:"), "Ready taints:effects = " + out + errOut
	})
	if out := k.mustKubectl(t, "get", "node", "node02", "--no-headers"); !strings.Contains(out, " NotReady ") {
		t.Errorf("kubectl get node node02: %q, want NotReady", out)
	}
	desc := k.mustKubectl(t, "describe", "node", "node02")
	for _, want := range []string{"node.kubernetes.io/unreachable:NoExecute", "node.kubernetes.io/unreachable:NoSchedule", "NodeStatusUnknown", "Kubelet stopped posting node status."} {
		if !strings.Contains(desc, want) {
			t.Errorf("describe node node02 lacks %q:\n%s", want, desc)
		}
	}

	// The pods' toleration runs out: they are evicted (Terminating for as
	// long as their kubelet is gone, as in Kubernetes) and replaced on node01.
	testserver.EventuallyWithin(t, 30*time.Second, "2 new edge pods Running on node01", func() (bool, string) {
		pods := c.pods("app%3Dedge")
		n := 0
		for _, p := range pods {
			if p.Spec.NodeName == "node01" && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				n++
			}
		}
		return n == 2, podStates(pods)
	})
	for _, old := range before {
		var pod corev1.Pod
		if code := c.do("GET", "/api/v1/namespaces/default/pods/"+old.Name, "", nil, &pod); code == 200 {
			if pod.DeletionTimestamp == nil {
				t.Errorf("pod %s on the dead node was not evicted", old.Name)
			}
			if ready := podcondition.Get(&pod, corev1.PodReady); ready == nil || ready.Status != corev1.ConditionFalse {
				t.Errorf("pod %s on the dead node has Ready %+v, want False", old.Name, ready)
			}
		}
	}
	events := k.mustKubectl(t, "get", "events", "--field-selector", "involvedObject.name=node02")
	if !strings.Contains(events, "NodeNotReady") {
		t.Errorf("no NodeNotReady event for node02:\n%s", events)
	}

	// The kubelet comes back: Ready again, the taints go, and it finishes
	// deleting the evicted pods.
	c.startKubelet("kubelet-node02-again", node02)
	testserver.EventuallyWithin(t, 30*time.Second, "node02 Ready without taints", func() (bool, string) {
		out, errOut, code := k.kubectl(t, "get", "node", "node02", "-o", "jsonpath={.status.conditions[?(@.type==\"Ready\")].status} {.spec.taints}")
		return code == 0 && strings.TrimSpace(out) == "True", "Ready taints = " + out + errOut
	})
	testserver.EventuallyWithin(t, 30*time.Second, "the evicted pods are gone", c.nRunning("app%3Dedge", 2))
}
