package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// Seed 003 §五's Using: pods that mount claims, with the real kubectl.
// The scheduler places them where their volumes are (VolumeBinding),
// provisions WaitForFirstConsumer claims on the node it picks, keeps a
// ReadWriteOncePod claim to one pod (VolumeRestrictions); the kubelet
// mounts the volume, and refuses a ReadWriteOnce volume another node has
// attached (Multi-Attach).

// podUsing is a busybox pod running sh -c command with the claim mounted
// at /data; node, if set, is its nodeSelector's hostname.
func podUsing(name, claim, node, restart, command string) string {
	selector := ""
	if node != "" {
		selector = "\n  nodeSelector: {kubernetes.io/hostname: " + node + "}"
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  restartPolicy: %s
  terminationGracePeriodSeconds: 0%s
  containers:
    - name: c
      image: busybox:1.36
      command: [sh, -c, '%s']
      volumeMounts: [{mountPath: /data, name: data}]
  volumes:
    - name: data
      persistentVolumeClaim: {claimName: %s}
`, name, restart, selector, command, claim)
}

func claimOf(name, class, mode string) string {
	sc := ""
	if class != "" {
		sc = "\n  storageClassName: " + class
	}
	return fmt.Sprintf(`apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: %s
spec:%s
  accessModes: [%s]
  resources: {requests: {storage: 1Gi}}
`, name, sc, mode)
}

// pinnedVolume is a hostPath volume on node01 only, and a claim the PV
// controller binds to it at once (no class: Immediate).
const pinnedVolume = `apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv-node01
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /data/pv-node01, type: DirectoryOrCreate}
  nodeAffinity:
    required:
      nodeSelectorTerms:
        - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node01]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: pinned
spec:
  storageClassName: ""
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`

// waitClass provisions on the node the scheduler picks.
const waitClass = `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: wait
provisioner: mkube.io/hostpath
volumeBindingMode: WaitForFirstConsumer
`

func TestPodsMountClaims(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01", "node02")
	k := newKubectl(t, c)
	s := &seedRun{c: c, k: k}
	apply := func(name, yaml string) { k.mustKubectl(t, "apply", "-f", k.manifest(t, name+".yaml", yaml)) }
	jsonpath := func(kind, name, path string) string {
		out, _, _ := k.kubectl(t, "get", kind, name, "-o", "jsonpath="+path)
		return out
	}
	waitFor := func(what string, cond func() (bool, string)) {
		t.Helper()
		testserver.EventuallyWithin(t, 60*time.Second, what, cond)
	}
	logs := func(pod, want string) {
		t.Helper()
		waitFor("kubectl logs "+pod, func() (bool, string) {
			out, errOut, _ := k.kubectl(t, "logs", pod)
			return out == want, out + errOut
		})
	}
	phase := func(pod, want string) {
		t.Helper()
		waitFor(pod+" is "+want, func() (bool, string) {
			out := jsonpath("pod", pod, "{.status.phase}")
			return out == want, out
		})
	}

	t.Run("what one pod writes through a provisioned claim a later pod reads on another node", func(t *testing.T) {
		apply("notes", claimOf("notes", "", "ReadWriteOnce")+"---\n"+
			podUsing("writer", "notes", "node01", "Never", "echo written by writer > /data/note"))
		phase("writer", "Succeeded")
		apply("reader", podUsing("reader", "notes", "node02", "Never", "cat /data/note"))
		logs("reader", "written by writer\n")
		volume := jsonpath("pvc", "notes", "{.spec.volumeName}")
		if src := jsonpath("pv", volume, "{.spec.nfs.server}:{.spec.nfs.path}"); src != "mkube-provisioner:/"+volume {
			t.Errorf("the provisioned volume is %s", src)
		}
		t.Logf("kubectl get pod -o wide:\n%s", k.mustKubectl(t, "get", "pod", "writer", "reader", "-o", "wide"))
	})

	t.Run("a pod whose claim's volume is pinned to node01 goes there", func(t *testing.T) {
		apply("pinned", pinnedVolume+"---\n"+podUsing("pinned", "pinned", "", "Always", "echo hello > /data/greeting; sleep 3600"))
		if node := s.runningOn(t, "pinned"); node != "node01" {
			t.Fatalf("pinned runs on %s", node)
		}
		explained := s.explain(t, "pinned")
		for _, want := range []string{"node02  rejected", "VolumeBinding: node(s) had volume node affinity conflict",
			"VolumeBinding  claim default/pinned: bound to volume pv-node01"} {
			if !strings.Contains(explained, want) {
				t.Errorf("mkube explain pod pinned does not say %q:\n%s", want, explained)
			}
		}
		t.Logf("mkube explain pod pinned:\n%s", explained)
		if out := k.mustKubectl(t, "exec", "pinned", "--", "cat", "/data/greeting"); out != "hello\n" {
			t.Errorf("the volume's file: %q", out)
		}
	})

	t.Run("a WaitForFirstConsumer claim is provisioned on the node the scheduler picks", func(t *testing.T) {
		apply("wait", waitClass+"---\n"+claimOf("late", "wait", "ReadWriteOnce"))
		waitFor("the claim waits for its first consumer", func() (bool, string) {
			out := k.mustKubectl(t, "describe", "pvc", "late")
			return matches(`Status:\s+Pending`, out) && matches(`WaitForFirstConsumer\s.*waiting for first consumer to be created before binding`, out), out
		})
		apply("consumer", podUsing("consumer", "late", "", "Always", "sleep 3600"))
		node := s.runningOn(t, "consumer")
		if got := jsonpath("pvc", "late", `{.metadata.annotations.volume\.kubernetes\.io/selected-node} {.status.phase}`); got != node+" Bound" {
			t.Errorf("the claim: selected-node and phase %q, want %q", got, node+" Bound")
		}
		volume := jsonpath("pvc", "late", "{.spec.volumeName}")
		pinned := jsonpath("pv", volume, "{.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values} {.spec.hostPath.path}")
		if want := fmt.Sprintf(`["%s"] /var/lib/mkube-provisioner/%s`, node, volume); pinned != want {
			t.Errorf("the provisioned volume: node affinity and path %q, want %q (on the chosen node's disk, pinned there)", pinned, want)
		}
		if out := s.explain(t, "consumer"); !strings.Contains(out, "claim default/late: a new volume of class wait, provisioned for this node (volume.kubernetes.io/selected-node)") {
			t.Errorf("mkube explain pod consumer:\n%s", out)
		}
		t.Logf("kubectl describe pvc late:\n%s", k.mustKubectl(t, "describe", "pvc", "late"))
	})

	t.Run("a pod whose claim is missing is Pending until it exists", func(t *testing.T) {
		apply("orphan", podUsing("orphan", "missing", "", "Always", "sleep 3600"))
		msg := `0/2 nodes are available: persistentvolumeclaim "missing" not found. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..`
		s.pending(t, "orphan", msg)
		s.wantExplainPending(t, "orphan", msg)
		apply("missing", claimOf("missing", "", "ReadWriteOnce"))
		s.runningOn(t, "orphan")
	})

	t.Run("a ReadWriteOncePod claim is one pod's", func(t *testing.T) {
		apply("solo", claimOf("solo", "", "ReadWriteOncePod")+"---\n"+podUsing("solo-1", "solo", "", "Always", "sleep 3600"))
		s.runningOn(t, "solo-1")
		apply("solo-2", podUsing("solo-2", "solo", "", "Always", "sleep 3600"))
		s.pending(t, "solo-2", "0/2 nodes are available: 2 node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode. "+
			"preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..")
		k.mustKubectl(t, "delete", "pod", "solo-1")
		s.runningOn(t, "solo-2")
	})

	t.Run("a ReadWriteOnce volume used on node01 cannot be attached to node02", func(t *testing.T) {
		apply("rwo", claimOf("rwo", "", "ReadWriteOnce")+"---\n"+podUsing("first", "rwo", "node01", "Always", "sleep 3600"))
		s.runningOn(t, "first")
		apply("second", podUsing("second", "rwo", "node02", "Always", "echo second was here > /data/second; sleep 3600"))
		volume := jsonpath("pvc", "rwo", "{.spec.volumeName}")
		want := fmt.Sprintf(`Multi-Attach error for volume %q Volume is already used by pod(s) first`, volume)
		waitFor("FailedAttachVolume", func() (bool, string) {
			out := k.mustKubectl(t, "describe", "pod", "second")
			return matches(`Warning\s+FailedAttachVolume\s+.*attachdetach-controller\s+`+regexp.QuoteMeta(want), out), out
		})
		if out := k.mustKubectl(t, "get", "pod", "second", "--no-headers"); !strings.Contains(out, "ContainerCreating") {
			t.Errorf("second: %s, want ContainerCreating", out)
		}
		t.Logf("kubectl describe pod second (events):\n%s", strings.Join(section(k.mustKubectl(t, "describe", "pod", "second"), "Events:"), "\n"))
		k.mustKubectl(t, "delete", "pod", "first")
		if node := s.runningOn(t, "second"); node != "node02" {
			t.Errorf("second runs on %s", node)
		}
	})
}
