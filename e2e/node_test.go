package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// node.k8s.io RuntimeClasses with the real kubectl: a class's overhead
// and nodeSelector are given to its pods at admission, a class that does
// not exist is refused, and a handler the node's runtime has not got
// leaves the pod Pending with the runtime's error, as containerd's.
const runtimeClassManifests = `apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: runc
handler: runc
overhead:
  podFixed:
    cpu: 10m
    memory: 1Mi
scheduling:
  nodeSelector:
    kubernetes.io/os: linux
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: gvisor
handler: runsc
---
apiVersion: v1
kind: Pod
metadata:
  name: plain
spec:
  runtimeClassName: runc
  containers:
  - name: web
    image: nginx:1.25
---
apiVersion: v1
kind: Pod
metadata:
  name: sandboxed
spec:
  runtimeClassName: gvisor
  containers:
  - name: web
    image: nginx:1.25
`

const missingClassPod = `apiVersion: v1
kind: Pod
metadata:
  name: lost
spec:
  runtimeClassName: kata
  containers:
  - name: web
    image: nginx:1.25
`

const badRuntimeClass = `apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: bad
handler: Kata_QEMU
`

func TestRuntimeClasses(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01")
	k := newKubectl(t, c)
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "runtimeclasses.yaml", runtimeClassManifests))

	out := k.mustKubectl(t, "get", "runtimeclass")
	t.Logf("kubectl get runtimeclass\n%s", out)
	tab := parseTable(t, out)
	if row := tab.row(t, "NAME", "gvisor"); row["HANDLER"] != "runsc" || row["AGE"] == "" {
		t.Fatalf("kubectl get runtimeclass: %v", row)
	}

	got := k.mustKubectl(t, "get", "pod", "plain", "-o", `jsonpath={.spec.overhead.cpu} {.spec.overhead.memory} {.spec.nodeSelector}`)
	if got != `10m 1Mi {"kubernetes.io/os":"linux"}` {
		t.Fatalf("the RuntimeClass plugin gave the pod overhead and nodeSelector %q", got)
	}
	testserver.EventuallyWithin(t, 60*time.Second, "the pod of handler runc runs", func() (bool, string) {
		phase, _, _ := k.kubectl(t, "get", "pod", "plain", "-o", "jsonpath={.status.phase}")
		return phase == "Running", phase
	})
	want := `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "runsc" is configured`
	testserver.EventuallyWithin(t, 60*time.Second, "the pod of handler runsc has a FailedCreatePodSandBox event", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "events", "--field-selector", "involvedObject.name=sandboxed,reason=FailedCreatePodSandBox",
			"-o", "jsonpath={.items[*].message}")
		return strings.Contains(out, want), out
	})
	described := k.mustKubectl(t, "describe", "pod", "sandboxed")
	t.Logf("kubectl describe pod sandboxed\n%s", described)
	if !strings.Contains(described, "Runtime Class Name:  gvisor") || !strings.Contains(described, "Pending") {
		t.Errorf("kubectl describe pod sandboxed: want Runtime Class Name gvisor, Pending")
	}

	errOut := k.mustFail(t, "apply", "-f", k.manifest(t, "lost.yaml", missingClassPod))
	if !strings.Contains(errOut, `pods "lost" is forbidden: pod rejected: RuntimeClass "kata" not found`) {
		t.Errorf("a pod of a class that does not exist: %s", errOut)
	}
	errOut = k.mustFail(t, "apply", "-f", k.manifest(t, "bad.yaml", badRuntimeClass))
	if !strings.Contains(errOut, `handler: Invalid value: "Kata_QEMU": a lowercase RFC 1123 label must consist of`) {
		t.Errorf("a handler that is no DNS label: %s", errOut)
	}
}
