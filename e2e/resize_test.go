package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// In-place pod resize, with the real kubectl: `kubectl patch
// --subresource resize` changes a running container's cpu without a
// restart (its cgroup files say so at once), a resize beyond the node is
// Infeasible and changes nothing, and a memory resize of a container
// whose resizePolicy says RestartContainer restarts it with the new limit.
func TestAPodIsResizedInPlace(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01") // 4 CPUs, 8Gi
	k := newKubectl(t, c)
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "web.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  terminationGracePeriodSeconds: 1 # sleep, as PID 1, ignores SIGTERM
  containers:
  - name: web
    image: busybox
    command: ["sleep", "3600"]
    resizePolicy:
    - {resourceName: cpu, restartPolicy: NotRequired}
    - {resourceName: memory, restartPolicy: RestartContainer}
    resources:
      requests: {cpu: 100m, memory: 64Mi}
      limits: {memory: 128Mi}
`))
	k.mustKubectl(t, "wait", "--for=condition=Ready", "pod/web", "--timeout=60s")
	cgroup := func() string {
		return k.mustKubectl(t, "exec", "web", "--", "sh", "-c", "cat /sys/fs/cgroup/cpu.weight /sys/fs/cgroup/memory.max")
	}
	if got := cgroup(); got != "4\n134217728\n" {
		t.Fatalf("cgroup before the resize: %q", got)
	}
	const status = `{.metadata.generation} {.status.observedGeneration} {.status.containerStatuses[0].allocatedResources.cpu} ` +
		`{.status.containerStatuses[0].resources.requests.cpu} {.status.containerStatuses[0].resources.limits.memory} ` +
		`{.status.containerStatuses[0].restartCount} {.status.conditions[?(@.type=="PodResizePending")].reason}`
	settled := func(want string) {
		t.Helper()
		testserver.EventuallyWithin(t, 30*time.Second, "the pod's status is "+want, func() (bool, string) {
			got := k.mustKubectl(t, "get", "pod", "web", "-o", "jsonpath="+status)
			return got == want, got
		})
	}
	settled("1 1 100m 100m 128Mi 0 ")

	// More cpu: in place.
	k.mustKubectl(t, "patch", "pod", "web", "--subresource", "resize", "-p",
		`{"spec":{"containers":[{"name":"web","resources":{"requests":{"cpu":"200m"}}}]}}`)
	settled("2 2 200m 200m 128Mi 0 ")
	if got := cgroup(); got != "8\n134217728\n" {
		t.Errorf("cgroup after the cpu resize: %q", got)
	}

	// More cpu than the node has: Infeasible, and nothing changes.
	k.mustKubectl(t, "patch", "pod", "web", "--subresource", "resize", "-p",
		`{"spec":{"containers":[{"name":"web","resources":{"requests":{"cpu":"5"}}}]}}`)
	settled("3 3 200m 200m 128Mi 0 Infeasible")
	if msg := k.mustKubectl(t, "get", "pod", "web", "-o", `jsonpath={.status.conditions[?(@.type=="PodResizePending")].message}`); msg != "Node didn't have enough capacity: cpu, requested: 5000, capacity: 4000" {
		t.Errorf("the Infeasible message: %q", msg)
	}

	// Back to a cpu that fits, and a memory limit that restarts the
	// container, as its resizePolicy says.
	k.mustKubectl(t, "patch", "pod", "web", "--subresource", "resize", "-p",
		`{"spec":{"containers":[{"name":"web","resources":{"requests":{"cpu":"200m"},"limits":{"memory":"256Mi"}}}]}}`)
	settled("4 4 200m 200m 256Mi 1 ")
	k.mustKubectl(t, "wait", "--for=condition=Ready", "pod/web", "--timeout=60s")
	if got := cgroup(); got != "8\n268435456\n" {
		t.Errorf("cgroup after the memory resize: %q", got)
	}

	// What a resize may not do, in Kubernetes' words; nothing changes.
	_, errOut, code := k.kubectl(t, "patch", "pod", "web", "--subresource", "resize", "-p",
		`{"spec":{"containers":[{"name":"web","resources":{"requests":{"cpu":"200m","memory":"64Mi"},"limits":{"cpu":"100m","memory":"256Mi"}}}]}}`)
	if code == 0 || !strings.Contains(errOut, `Pod QOS Class`) && !strings.Contains(errOut, "must be less than or equal to cpu limit") {
		t.Errorf("a request above its limit: exit %d, %s", code, errOut)
	}
	if got := k.mustKubectl(t, "get", "pod", "web", "-o", "jsonpath={.metadata.generation}"); got != "4" {
		t.Errorf("a refused resize changed the generation to %s", got)
	}
}
