package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// Seed 003 §六–七's Secret and ConfigMap volumes (with busybox for the
// seed's my-app:0.0.1, which no registry has), and the volumes of §四.
const volumePods = `apiVersion: v1
kind: ConfigMap
metadata:
  name: special-config
data:
  special.how: very
  special.type: charm
---
apiVersion: v1
kind: Secret
metadata:
  name: my-secret
type: Opaque
data:
  username: YWRtaW4=
  password: YWRtaW4xMjM0NTY=
---
apiVersion: v1
kind: Pod
metadata:
  name: special-pod
spec:
  restartPolicy: Never
  containers:
    - name: special-container
      image: busybox:1.36
      command: ['/bin/bash', '-c', 'cat /etc/config/special.how']
      volumeMounts:
        - mountPath: /etc/config
          name: config-volume
  volumes:
    - name: config-volume
      configMap:
        name: special-config
---
apiVersion: v1
kind: Pod
metadata:
  name: secret-test
spec:
  restartPolicy: Never
  containers:
    - name: secret-test
      image: busybox:1.36
      command: [sh, -c, 'cat /my-secret/username; echo; cat /my-secret/password; echo; ls /my-secret']
      volumeMounts:
        - mountPath: /my-secret
          name: my-secret
  volumes:
    - name: my-secret
      secret:
        secretName: my-secret
---
apiVersion: v1
kind: Pod
metadata:
  name: watcher
  labels:
    app: watcher
spec:
  containers:
    - name: c
      image: busybox:1.36
      command: [sh, -c, 'while true; do printf how=; cat /etc/config/special.how; printf " sub="; cat /etc/sub/how; echo " env=$HOW"; sleep 1; done']
      env:
        - name: HOW
          valueFrom:
            configMapKeyRef: {name: special-config, key: special.how}
      volumeMounts:
        - {mountPath: /etc/config, name: config}
        - {mountPath: /etc/sub/how, name: config, subPath: special.how}
        - {mountPath: /etc/podinfo, name: podinfo}
  volumes:
    - name: config
      configMap: {name: special-config}
    - name: podinfo
      downwardAPI:
        items:
          - path: labels
            fieldRef: {fieldPath: metadata.labels}
          - path: name
            fieldRef: {fieldPath: metadata.name}
---
apiVersion: v1
kind: Pod
metadata:
  name: shared
spec:
  containers:
    - name: writer
      image: busybox:1.36
      command: [sh, -c, 'echo run >> /cache/runs; [ -f /cache/msg ] || echo hello > /cache/msg; cat /cache/runs; sleep 2; exit 1']
      volumeMounts: [{mountPath: /cache, name: cache}]
    - name: reader
      image: busybox:1.36
      # -s: not only created but written (echo's > creates, then writes)
      command: [sh, -c, 'while [ ! -s /data/msg ]; do sleep 1; done; cat /data/msg; sleep 3600']
      volumeMounts: [{mountPath: /data, name: cache}]
  volumes:
    - name: cache
      emptyDir: {}
---
apiVersion: v1
kind: Pod
metadata:
  name: waits-for-config
spec:
  restartPolicy: Never
  containers:
    - name: c
      image: busybox:1.36
      command: [sh, -c, 'cat /etc/late/key']
      volumeMounts: [{mountPath: /etc/late, name: late}]
  volumes:
    - name: late
      configMap: {name: late-config}
`

// The node's own and the network's disks: a hostPath survives its pod
// on its node; an nfs export is the same on every node.
const hostPathPods = `apiVersion: v1
kind: Pod
metadata:
  name: host-writer
spec:
  nodeName: node01
  restartPolicy: Never
  containers:
    - name: c
      image: busybox:1.36
      command: [sh, -c, 'echo from-host-writer > /host/note; echo from-nfs-writer > /nfs/note']
      volumeMounts: [{mountPath: /host, name: host}, {mountPath: /nfs, name: nfs}]
  volumes:
    - name: host
      hostPath: {path: /var/data, type: DirectoryOrCreate}
    - name: nfs
      nfs: {server: nfs.example.com, path: /exports/share}
`

func hostPathReader(name, node string) string {
	return `apiVersion: v1
kind: Pod
metadata:
  name: ` + name + `
spec:
  nodeName: ` + node + `
  restartPolicy: Never
  containers:
    - name: c
      image: busybox:1.36
      command: [sh, -c, 'cat /host/note; cat /nfs/note']
      volumeMounts: [{mountPath: /host, name: host}, {mountPath: /nfs, name: nfs}]
  volumes:
    - name: host
      hostPath: {path: /var/data}
    - name: nfs
      nfs: {server: nfs.example.com, path: /exports/share}
`
}

// TestVolumes: ConfigMap and Secret volumes show their keys as files;
// an updated ConfigMap reaches a mounted volume within the sync period,
// but not a subPath mount nor an environment variable; emptyDir is
// shared by the pod's containers and outlives their restarts; a missing
// ConfigMap holds the pod in ContainerCreating until it exists; hostPath
// is the node's, nfs everyone's.
func TestVolumes(t *testing.T) {
	t.Parallel()
	fast := []string{"--sync-frequency", "2s", "--crash-loop-backoff-initial", "1s"}
	c := startClusterWithNodes(t, nil, kubeletNode{name: "node01", flags: fast}, kubeletNode{name: "node02", flags: fast})
	k := newKubectl(t, c)
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "volumes.yaml", volumePods))

	logsOf := func(pod string, args ...string) func() (bool, string) {
		return func() (bool, string) {
			out, errOut, _ := k.kubectl(t, append([]string{"logs", pod}, args...)...)
			return false, out + errOut
		}
	}
	wantLogs := func(pod, want string, args ...string) {
		t.Helper()
		testserver.EventuallyWithin(t, 30*time.Second, "kubectl logs "+pod, func() (bool, string) {
			_, out := logsOf(pod, args...)()
			return out == want, fmt.Sprintf("%q", out)
		})
	}
	wantLogs("special-pod", "very") // the key has no newline: containerd logs the last line as P, shown as printed
	wantLogs("secret-test", "admin\nadmin123456\npassword\nusername\n")

	// The ConfigMap changes: the volume follows, subPath and env do not.
	testserver.EventuallyWithin(t, 30*time.Second, "watcher runs", func() (bool, string) {
		_, out := logsOf("watcher", "--tail", "1")()
		return out == "how=very sub=very env=very\n", out
	})
	k.mustKubectl(t, "patch", "configmap", "special-config", "-p", `{"data":{"special.how":"extremely"}}`)
	testserver.EventuallyWithin(t, 30*time.Second, "the mounted ConfigMap updated in place", func() (bool, string) {
		_, out := logsOf("watcher", "--tail", "1")()
		return out == "how=extremely sub=very env=very\n", out
	})
	if out := k.mustKubectl(t, "exec", "watcher", "--", "cat", "/etc/podinfo/labels", "/etc/podinfo/name"); out != "app=\"watcher\"watcher" {
		t.Errorf("downward API files: %q", out)
	}

	// emptyDir: the reader sees what the writer wrote; the writer, which
	// exits each time, finds its earlier runs' lines.
	wantLogs("shared", "hello\n", "-c", "reader")
	testserver.EventuallyWithin(t, 60*time.Second, "the writer's restarts append to the same emptyDir", func() (bool, string) {
		_, out := logsOf("shared", "-c", "writer")()
		return strings.HasPrefix(out, "run\nrun\n"), out
	})

	// A missing ConfigMap: ContainerCreating and FailedMount, until it
	// is created.
	testserver.EventuallyWithin(t, 30*time.Second, "FailedMount for late-config", func() (bool, string) {
		out := k.mustKubectl(t, "get", "events", "--field-selector", "involvedObject.name=waits-for-config,reason=FailedMount", "-o", "jsonpath={.items[*].message}")
		return strings.Contains(out, `MountVolume.SetUp failed for volume "late" : configmap "late-config" not found`), out
	})
	if out := k.mustKubectl(t, "get", "pod", "waits-for-config", "--no-headers"); !strings.Contains(out, "ContainerCreating") {
		t.Errorf("waits-for-config: %s, want ContainerCreating", out)
	}
	k.mustKubectl(t, "create", "configmap", "late-config", "--from-literal=key=arrived")
	wantLogs("waits-for-config", "arrived") // no newline in the key, none in the log

	// hostPath and nfs: written by one pod, read after it by others.
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "host-writer.yaml", hostPathPods))
	testserver.EventuallyWithin(t, 30*time.Second, "host-writer Completed", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "pod", "host-writer", "-o", "jsonpath={.status.phase}")
		return out == "Succeeded", out
	})
	k.mustKubectl(t, "delete", "pod", "host-writer")
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "readers.yaml", hostPathReader("same-node", "node01")+"---\n"+hostPathReader("other-node", "node02")))
	wantLogs("same-node", "from-host-writer\nfrom-nfs-writer\n")
	testserver.EventuallyWithin(t, 30*time.Second, "other-node sees the nfs file, not node01's hostPath", func() (bool, string) {
		_, out := logsOf("other-node")()
		return out == "cat: can't open '/host/note': No such file or directory\nfrom-nfs-writer\n", out
	})
}
