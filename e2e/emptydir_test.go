package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// A Deployment's pod fills its emptyDir past its sizeLimit once (the
// hostPath marker keeps the replacement from doing it again); a pod
// fills a Memory emptyDir; a pod's containers share a volume, one of
// them seeing only its pod's subdirectory of it.
const emptyDirPods = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: hog
spec:
  replicas: 1
  selector: {matchLabels: {app: hog}}
  template:
    metadata: {labels: {app: hog}}
    spec:
      containers:
        - name: hog
          image: busybox:1.36
          command: [sh, -c, 'if [ ! -f /host/filled ]; then touch /host/filled; for i in 1 2 3 4; do for j in 1 2 3 4 5; do echo 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789 >> /cache/fill; done; done; fi; sleep 3600']
          volumeMounts: [{mountPath: /cache, name: cache}, {mountPath: /host, name: host}]
      volumes:
        - name: cache
          emptyDir: {sizeLimit: 1Ki}
        - name: host
          hostPath: {path: /var/hog, type: DirectoryOrCreate}
---
apiVersion: v1
kind: Pod
metadata:
  name: ram
spec:
  restartPolicy: Never
  containers:
    - name: c
      image: busybox:1.36
      command: [sh, -c, 'echo 0123456789012345678901234567890123456789 > /mem/a; echo 0123456789012345678901234567890123456789 >> /mem/a; cat /mem/a; echo; sleep 3600']
      volumeMounts: [{mountPath: /mem, name: mem}]
  volumes:
    - name: mem
      emptyDir: {medium: Memory, sizeLimit: "64"}
---
apiVersion: v1
kind: Pod
metadata:
  name: sub-expr
spec:
  restartPolicy: Never
  containers:
    - name: writer
      image: busybox:1.36
      command: [sh, -c, 'echo from $POD_NAME > /out/note']
      env:
        - name: POD_NAME
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
      volumeMounts: [{mountPath: /out, name: shared, subPathExpr: $(POD_NAME)}]
    - name: reader
      image: busybox:1.36
      command: [sh, -c, 'while [ ! -s /all/sub-expr/note ]; do sleep 1; done; ls /all; cat /all/sub-expr/note']
      volumeMounts: [{mountPath: /all, name: shared}]
  volumes:
    - name: shared
      emptyDir: {}
---
apiVersion: v1
kind: Pod
metadata:
  name: climbs
spec:
  restartPolicy: Never
  containers:
    - name: c
      image: busybox:1.36
      command: [sh, -c, 'true']
      env: [{name: UP, value: ".."}]
      volumeMounts: [{mountPath: /out, name: shared, subPathExpr: $(UP)}]
  volumes:
    - name: shared
      emptyDir: {}
`

// TestEmptyDir: an emptyDir over its sizeLimit gets its pod Evicted, in
// Kubernetes' words, and the ReplicaSet replaces it; a Memory emptyDir
// is a tmpfs of its sizeLimit, ENOSPC past it, not on the node's disk;
// subPathExpr mounts the pod's own subdirectory, made for it, and one
// that climbs out of the volume fails the container.
func TestEmptyDir(t *testing.T) {
	t.Parallel()
	fast := []string{"--eviction-monitoring-period", "1s"}
	c := startClusterWithNodes(t, nil, kubeletNode{name: "node01", flags: fast})
	k := newKubectl(t, c)
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "emptydir.yaml", emptyDirPods))

	// Eviction: reason, message (with its trailing space) and event.
	const message = `Usage of EmptyDir volume "cache" exceeds the limit "1Ki". `
	var evicted string
	testserver.EventuallyWithin(t, 60*time.Second, "a hog pod Evicted and its replacement Running", func() (bool, string) {
		out := k.mustKubectl(t, "get", "pods", "-l", "app=hog", "-o", `jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.status.reason}{"\n"}{end}`)
		var running bool
		evicted = ""
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			switch f := strings.Fields(line); {
			case len(f) == 3 && f[1] == "Failed" && f[2] == "Evicted":
				evicted = f[0]
			case len(f) == 2 && f[1] == "Running":
				running = true
			}
		}
		return evicted != "" && running, out
	})
	if got := k.mustKubectl(t, "get", "pod", evicted, "-o", "jsonpath={.status.message}"); got != message {
		t.Errorf("status.message %q, want %q", got, message)
	}
	// Its container is stopped (killed: 137), which kubectl's STATUS then
	// shows over the pod's reason, as it does in Kubernetes since 1.22
	// (kubernetes/kubernetes#105467).
	testserver.EventuallyWithin(t, 30*time.Second, "the evicted pod's container killed", func() (bool, string) {
		out := k.mustKubectl(t, "get", "pod", evicted, "--no-headers")
		code := k.mustKubectl(t, "get", "pod", evicted, "-o", "jsonpath={.status.containerStatuses[0].state.terminated.exitCode}")
		f := strings.Fields(out)
		return len(f) > 2 && f[2] == "Error" && code == "137", out + " exitCode " + code
	})
	testserver.EventuallyWithin(t, 30*time.Second, "the Evicted event", func() (bool, string) {
		out := k.mustKubectl(t, "get", "events", "--field-selector", "involvedObject.name="+evicted+",reason=Evicted", "-o", "jsonpath={.items[*].type} {.items[*].message}")
		return out == "Warning "+message, out
	})

	// Memory: 41 bytes fit in 64, of the next 41 only 23.
	testserver.EventuallyWithin(t, 30*time.Second, "ram's logs", func() (bool, string) {
		out, errOut, _ := k.kubectl(t, "logs", "ram")
		want := "sh: write error: No space left on device\n" + strings.Repeat("0123456789", 4) + "\n" + "01234567890123456789012\n"
		return out == want, out + errOut
	})
	uid := k.mustKubectl(t, "get", "pod", "ram", "-o", "jsonpath={.metadata.uid}")
	disk := filepath.Join(c.dir, "nodes", "node01")
	point := "/var/lib/kubelet/pods/" + uid + "/volumes/kubernetes.io~empty-dir/mem"
	if mounts, _ := os.ReadFile(filepath.Join(disk, "proc", "mounts")); !strings.Contains(string(mounts), "tmpfs "+point+" tmpfs rw,size=64 0 0\n") {
		t.Errorf("the node's /proc/mounts:\n%s\nwant the tmpfs at %s", mounts, point)
	}
	if entries, err := os.ReadDir(filepath.Join(disk, point)); err != nil || len(entries) != 0 {
		t.Errorf("the node's disk under the tmpfs: %v, %v; want nothing", entries, err)
	}

	// subPathExpr: the writer's /out is <volume>/sub-expr/.
	testserver.EventuallyWithin(t, 30*time.Second, "the reader sees the writer's subdirectory", func() (bool, string) {
		out, errOut, _ := k.kubectl(t, "logs", "sub-expr", "-c", "reader")
		return out == "sub-expr\nfrom sub-expr\n", out + errOut
	})
	testserver.EventuallyWithin(t, 30*time.Second, "climbs fails with Kubernetes' subPath error", func() (bool, string) {
		out := k.mustKubectl(t, "get", "pod", "climbs", "-o", "jsonpath={.status.containerStatuses[0].state.waiting.reason}: {.status.containerStatuses[0].state.waiting.message}")
		return out == "CreateContainerConfigError: unable to provision SubPath `..`: must not contain '..'", out
	})
	both := strings.Replace(strings.Split(emptyDirPods, "---\n")[3], "name: climbs", "name: both", 1)
	both = strings.Replace(both, "subPathExpr: $(UP)", "subPath: x, subPathExpr: $(UP)", 1)
	if out := k.mustFail(t, "apply", "-f", k.manifest(t, "both.yaml", both)); !strings.Contains(out, `spec.containers[0].volumeMounts[0].subPathExpr: Invalid value: "$(UP)": subPathExpr and subPath are mutually exclusive`) {
		t.Errorf("subPath with subPathExpr: %s", out)
	}
}
