package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// What the kubelet gives a container besides its image and volumes, as
// Kubernetes' [sig-node] conformance tests check it: the termination
// message, /etc/hosts, /etc/resolv.conf, the user it runs as, a
// read-only root, and status.observedGeneration.

// terminationPods end at once, leaving a termination message: written to
// the default file; to a custom path by a non-root user; and, by a
// failing container that wrote none, taken from the end of its log
// (FallbackToLogsOnError), where `echo -n` left a line without newline.
const terminationPods = `apiVersion: v1
kind: Pod
metadata:
  name: term-file
spec:
  restartPolicy: Never
  containers:
    - name: c
      image: busybox:1.36
      command: ['/bin/sh', '-c', '/bin/echo -n OK > /dev/termination-log; /bin/echo DONE; /bin/true']
      terminationMessagePolicy: FallbackToLogsOnError
---
apiVersion: v1
kind: Pod
metadata:
  name: term-custom
spec:
  restartPolicy: Never
  containers:
    - name: c
      image: busybox:1.36
      command: ['/bin/sh', '-c', '/bin/echo -n DONE > /dev/termination-custom-log']
      terminationMessagePath: /dev/termination-custom-log
      securityContext:
        runAsUser: 10000
---
apiVersion: v1
kind: Pod
metadata:
  name: term-logs
spec:
  restartPolicy: Never
  containers:
    - name: c
      image: busybox:1.36
      command: ['/bin/sh', '-c', 'echo first line; /bin/echo -n DONE; /bin/false']
      terminationMessagePolicy: FallbackToLogsOnError
---
apiVersion: v1
kind: Pod
metadata:
  name: term-quiet
spec:
  restartPolicy: Never
  containers:
    - name: c
      image: busybox:1.36
      command: ['/bin/sh', '-c', '/bin/echo -n DONE; /bin/true']
      terminationMessagePolicy: FallbackToLogsOnError
`

// hostsPods: a pod with a hostname, a subdomain and hostAliases; a pod
// on the node's network; and a container that mounts the node's
// /etc/hosts itself.
const hostsPods = `apiVersion: v1
kind: Pod
metadata:
  name: hosts
spec:
  hostname: web-0
  subdomain: nginx
  hostAliases:
    - ip: 123.45.67.89
      hostnames: [foo, bar]
  containers:
    - name: managed
      image: busybox:1.36
      command: ['sleep', '3600']
    - name: own
      image: busybox:1.36
      command: ['sleep', '3600']
      volumeMounts:
        - name: node-hosts
          mountPath: /etc/hosts
  volumes:
    - name: node-hosts
      hostPath:
        path: /etc/hosts
        type: FileOrCreate
---
apiVersion: v1
kind: Pod
metadata:
  name: hostnet
spec:
  hostNetwork: true
  hostAliases:
    - ip: 10.1.2.3
      hostnames: [db]
  containers:
    - name: c
      image: busybox:1.36
      command: ['sleep', '3600']
`

// dnsPods: the default policy (ClusterFirst), the node's (Default), and
// None with the pod's own dnsConfig, read with agnhost as Kubernetes'
// "DNS should support configurable pod DNS nameservers" does.
const dnsPods = `apiVersion: v1
kind: Pod
metadata:
  name: dns-cluster
spec:
  containers:
    - name: c
      image: busybox:1.36
      command: ['sleep', '3600']
---
apiVersion: v1
kind: Pod
metadata:
  name: dns-default
spec:
  dnsPolicy: Default
  containers:
    - name: c
      image: busybox:1.36
      command: ['sleep', '3600']
---
apiVersion: v1
kind: Pod
metadata:
  name: dns-none
spec:
  dnsPolicy: None
  dnsConfig:
    nameservers: [1.1.1.1]
    searches: [resolv.conf.local]
    options:
      - name: ndots
        value: "2"
  containers:
    - name: c
      image: registry.k8s.io/e2e-test-images/agnhost:2.55
`

// securityPods run as a user and group of the pod's securityContext, as
// the container's user overriding it, and with a read-only root.
const securityPods = `apiVersion: v1
kind: Pod
metadata:
  name: ids
spec:
  restartPolicy: Never
  securityContext:
    runAsUser: 1001
    runAsGroup: 2002
    supplementalGroups: [3003]
  containers:
    - name: c
      image: busybox:1.36
      command: ['sh', '-c', 'id']
---
apiVersion: v1
kind: Pod
metadata:
  name: nobody
spec:
  restartPolicy: Never
  securityContext:
    runAsUser: 1001
  containers:
    - name: c
      image: busybox:1.36
      command: ['sh', '-c', 'id; test $(id -u) -eq 65534']
      securityContext:
        runAsUser: 65534
---
apiVersion: v1
kind: Pod
metadata:
  name: readonly
spec:
  restartPolicy: Never
  containers:
    - name: c
      image: busybox:1.36
      command: ['/bin/sh', '-c', 'echo test > /file; echo scratch > /tmp/x && cat /tmp/x']
      securityContext:
        readOnlyRootFilesystem: true
      volumeMounts:
        - name: tmp
          mountPath: /tmp
  volumes:
    - name: tmp
      emptyDir: {}
`

// kernelPods: a pod's sysctl, an unprivileged and a privileged container
// changing the network links, setuid with and without
// allowPrivilegeEscalation, and the restart-counting script of
// Kubernetes' "Container Runtime ... should run with the expected status".
const kernelPods = `apiVersion: v1
kind: Pod
metadata:
  name: sysctl
spec:
  restartPolicy: Never
  securityContext:
    sysctls:
      - name: kernel.shm_rmid_forced
        value: "1"
  containers:
    - name: c
      image: busybox:1.36
      command: ['/bin/sysctl', 'kernel.shm_rmid_forced']
---
apiVersion: v1
kind: Pod
metadata:
  name: unprivileged
spec:
  restartPolicy: Never
  containers:
    - name: c
      image: busybox:1.36
      command: ['sh', '-c', 'ip link add dummy0 type dummy || true']
      securityContext:
        privileged: false
---
apiVersion: v1
kind: Pod
metadata:
  name: privileged
spec:
  restartPolicy: Never
  containers:
    - name: c
      image: busybox:1.36
      command: ['sh', '-c', 'ip link add dummy0 type dummy && echo added']
      securityContext:
        privileged: true
---
apiVersion: v1
kind: Pod
metadata:
  name: setuid
spec:
  restartPolicy: Never
  containers:
    - name: c
      image: registry.k8s.io/e2e-test-images/nonewprivs:1.3
      securityContext:
        runAsUser: 1000
---
apiVersion: v1
kind: Pod
metadata:
  name: nonewprivs
spec:
  restartPolicy: Never
  containers:
    - name: c
      image: registry.k8s.io/e2e-test-images/nonewprivs:1.3
      securityContext:
        runAsUser: 1000
        allowPrivilegeEscalation: false
---
apiVersion: v1
kind: Pod
metadata:
  name: counter
spec:
  restartPolicy: OnFailure
  containers:
    - name: c
      image: busybox:1.36
      command:
        - sh
        - -c
        - |
          f=/restart-count/restartCount
          count=$(echo 'hello' >> $f ; wc -l $f | awk {'print $1'})
          if [ $count -eq 1 ]; then
          	exit 1
          fi
          if [ $count -eq 2 ]; then
          	exit 0
          fi
          while true; do sleep 1; done
      volumeMounts:
        - name: restart-count
          mountPath: /restart-count
  volumes:
    - name: restart-count
      emptyDir:
        medium: Memory
`

// hookPods: postStart hooks, an exec one that leaves a file, an httpGet
// one that the container's own server logs, and one that fails.
const hookPods = `apiVersion: v1
kind: Pod
metadata:
  name: hooks
spec:
  initContainers:
    - name: init
      image: busybox:1.36
      command: ['true']
  containers:
    - name: exec
      image: busybox:1.36
      command: ['sleep', '3600']
      lifecycle:
        postStart:
          exec:
            command: ['sh', '-c', 'echo started > /tmp/poststart']
    - name: http
      image: registry.k8s.io/e2e-test-images/agnhost:2.55
      args: ['netexec', '--http-port=8080']
      lifecycle:
        postStart:
          httpGet:
            path: /echo?msg=poststart
            port: 8080
---
apiVersion: v1
kind: Pod
metadata:
  name: badhook
spec:
  restartPolicy: Never
  containers:
    - name: c
      image: busybox:1.36
      command: ['sleep', '3600']
      lifecycle:
        postStart:
          exec:
            command: ['sh', '-c', 'exit 3']
`

// imageVolumePod mounts an image as a volume, as Kubernetes'
// "ImageVolume should succeed with pod and pull policy of Always" does.
const imageVolumePod = `apiVersion: v1
kind: Pod
metadata:
  name: imagevol
spec:
  containers:
    - name: c
      image: busybox:1.36
      command: ['sh', '-c', 'while true; do echo test; sleep 1; done']
      volumeMounts:
        - name: volume
          mountPath: /volume
  volumes:
    - name: volume
      image:
        reference: registry.k8s.io/e2e-test-images/kitten:1.8
        pullPolicy: Always
`

// TestKubeletContainerFiles: what the kubelet gives a container, seen with
// the real kubectl as a user (and Kubernetes' node conformance tests) see
// it.
// ephemeralOnCreatePod asks for an ephemeral container at creation, which
// only the ephemeralcontainers subresource of a running pod may add.
const ephemeralOnCreatePod = `apiVersion: v1
kind: Pod
metadata:
  name: eph
spec:
  containers:
    - name: c
      image: busybox:1.36
  ephemeralContainers:
    - name: debugger
      image: busybox:1.36
`

func TestKubeletContainerFiles(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01")
	k := newKubectl(t, c)
	jsonpath := func(t *testing.T, pod, path string) string {
		t.Helper()
		return k.mustKubectl(t, "get", "pod", pod, "-o", "jsonpath="+path)
	}
	waitPhase := func(t *testing.T, pod, phase string) {
		t.Helper()
		testserver.EventuallyWithin(t, 30*time.Second, pod+" is "+phase, func() (bool, string) {
			out, _, _ := k.kubectl(t, "get", "pod", pod, "-o", "jsonpath={.status.phase}")
			return out == phase, out
		})
	}

	t.Run("a container's termination message is its file, else the end of its log when it failed", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "term.yaml", terminationPods))
		for _, tt := range []struct{ pod, phase, message string }{
			{"term-file", "Succeeded", "OK"},
			{"term-custom", "Succeeded", "DONE"},
			{"term-logs", "Failed", "first line\nDONE"},
			{"term-quiet", "Succeeded", ""},
		} {
			waitPhase(t, tt.pod, tt.phase)
			if got := jsonpath(t, tt.pod, "{.status.containerStatuses[0].state.terminated.message}"); got != tt.message {
				t.Errorf("%s: state.terminated.message = %q, want %q", tt.pod, got, tt.message)
			}
		}
		if logs := k.mustKubectl(t, "logs", "term-logs"); logs != "first line\nDONE" {
			t.Errorf("kubectl logs term-logs = %q, want %q: a last line without newline is shown as printed", logs, "first line\nDONE")
		}
		if out := k.mustKubectl(t, "describe", "pod", "term-file"); !strings.Contains(out, "Message:") || !strings.Contains(out, "OK") {
			t.Errorf("kubectl describe pod term-file shows no termination message:\n%s", out)
		}
	})

	t.Run("the kubelet manages /etc/hosts unless the container mounts its own", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "hosts.yaml", hostsPods))
		waitPhase(t, "hosts", "Running")
		waitPhase(t, "hostnet", "Running")
		ip := jsonpath(t, "hosts", "{.status.podIP}")
		want := "# Kubernetes-managed hosts file.\n" +
			"127.0.0.1\tlocalhost\n" +
			"::1\tlocalhost ip6-localhost ip6-loopback\n" +
			"fe00::0\tip6-localnet\n" +
			"fe00::0\tip6-mcastprefix\n" +
			"fe00::1\tip6-allnodes\n" +
			"fe00::2\tip6-allrouters\n" +
			ip + "\tweb-0.nginx.default.svc.cluster.local\tweb-0\n" +
			"\n# Entries added by HostAliases.\n" +
			"123.45.67.89\tfoo\tbar\n"
		if got := k.mustKubectl(t, "exec", "hosts", "-c", "managed", "--", "cat", "/etc/hosts"); got != want {
			t.Errorf("/etc/hosts of a pod with hostname, subdomain and hostAliases:\n%s\nwant:\n%s", got, want)
		}
		node := k.mustKubectl(t, "exec", "hosts", "-c", "own", "--", "cat", "/etc/hosts")
		if !strings.Contains(node, "127.0.0.1\tnode01\n") || strings.HasPrefix(node, "#") {
			t.Errorf("a container mounting the node's /etc/hosts sees:\n%s\nwant the node's own file, with its name", node)
		}
		hostnet := k.mustKubectl(t, "exec", "hostnet", "--", "cat", "/etc/hosts")
		if want := "# Kubernetes-managed hosts file (host network).\n" + node + "\n# Entries added by HostAliases.\n10.1.2.3\tdb\n"; hostnet != want {
			t.Errorf("/etc/hosts of a hostNetwork pod:\n%s\nwant:\n%s", hostnet, want)
		}
		if h := k.mustKubectl(t, "exec", "hostnet", "--", "hostname"); h != "node01\n" {
			t.Errorf("hostname in a hostNetwork pod = %q, want the node's, node01", h)
		}
	})

	t.Run("/etc/resolv.conf follows the pod's dnsPolicy and dnsConfig", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "dns.yaml", dnsPods))
		for _, p := range []string{"dns-cluster", "dns-default", "dns-none"} {
			waitPhase(t, p, "Running")
		}
		cluster := k.mustKubectl(t, "exec", "dns-cluster", "--", "cat", "/etc/resolv.conf")
		if want := "search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"; cluster != want {
			t.Errorf("ClusterFirst /etc/resolv.conf:\n%s\nwant:\n%s", cluster, want)
		}
		if got := k.mustKubectl(t, "exec", "dns-default", "--", "cat", "/etc/resolv.conf"); got != "nameserver 10.240.0.1\n" {
			t.Errorf("Default /etc/resolv.conf = %q, want the node's, %q", got, "nameserver 10.240.0.1\n")
		}
		if got := k.mustKubectl(t, "exec", "dns-none", "--", "cat", "/etc/resolv.conf"); got != "search resolv.conf.local\nnameserver 1.1.1.1\noptions ndots:2\n" {
			t.Errorf("None /etc/resolv.conf = %q, want only the pod's dnsConfig", got)
		}
		if got := k.mustKubectl(t, "exec", "dns-none", "--", "/agnhost", "dns-suffix"); got != "resolv.conf.local\n" {
			t.Errorf("agnhost dns-suffix = %q, want %q", got, "resolv.conf.local\n")
		}
		if got := k.mustKubectl(t, "exec", "dns-none", "--", "/agnhost", "dns-server-list"); got != "1.1.1.1\n" {
			t.Errorf("agnhost dns-server-list = %q, want %q", got, "1.1.1.1\n")
		}
	})

	t.Run("a container runs as its securityContext's user and groups, on a read-only root if asked", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "security.yaml", securityPods))
		waitPhase(t, "ids", "Succeeded")
		if got := k.mustKubectl(t, "logs", "ids"); got != "uid=1001 gid=2002 groups=2002,3003\n" {
			t.Errorf("id with the pod's runAsUser, runAsGroup and supplementalGroups = %q", got)
		}
		waitPhase(t, "nobody", "Succeeded")
		if got := k.mustKubectl(t, "logs", "nobody"); got != "uid=65534(nobody) gid=65534(nogroup) groups=65534(nogroup)\n" {
			t.Errorf("id as busybox's nobody, the container's runAsUser = %q", got)
		}
		waitPhase(t, "readonly", "Succeeded")
		if got := k.mustKubectl(t, "logs", "readonly"); got != "/bin/sh: can't create /file: Read-only file system\nscratch\n" {
			t.Errorf("a read-only root with a writable volume: logs %q", got)
		}
	})

	t.Run("sysctls, privileges and the text tools scripts pipe through", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "kernel.yaml", kernelPods))
		for _, tt := range []struct{ pod, logs string }{
			{"sysctl", "kernel.shm_rmid_forced = 1\n"},
			{"unprivileged", "ip: RTNETLINK answers: Operation not permitted\n"},
			{"privileged", "added\n"},
			{"setuid", "Effective uid: 0\n"},
			{"nonewprivs", "Effective uid: 1000\n"},
		} {
			waitPhase(t, tt.pod, "Succeeded")
			if got := k.mustKubectl(t, "logs", tt.pod); got != tt.logs {
				t.Errorf("kubectl logs %s = %q, want %q", tt.pod, got, tt.logs)
			}
		}
		// Fails once, succeeds once: OnFailure restarts it once, then it is done.
		waitPhase(t, "counter", "Succeeded")
		if got := jsonpath(t, "counter", "{.status.containerStatuses[0].restartCount}"); got != "1" {
			t.Errorf("counter restartCount = %s, want 1", got)
		}
	})

	t.Run("postStart hooks run once the container started; a failing one kills it", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "hooks.yaml", hookPods))
		waitPhase(t, "hooks", "Running")
		if got := jsonpath(t, "hooks", "{.status.initContainerStatuses[0].ready}"); got != "true" {
			t.Errorf("a completed init container's ready = %s, want true", got)
		}
		if got := k.mustKubectl(t, "exec", "hooks", "-c", "exec", "--", "cat", "/tmp/poststart"); got != "started\n" {
			t.Errorf("the exec postStart hook's file holds %q", got)
		}
		testserver.EventuallyWithin(t, 30*time.Second, "the http container logs its postStart GET", func() (bool, string) {
			out, _, _ := k.kubectl(t, "logs", "hooks", "-c", "http")
			return strings.Contains(out, "GET /echo?msg=poststart"), out
		})
		testserver.EventuallyWithin(t, 30*time.Second, "badhook has a FailedPostStartHook event and its container was killed", func() (bool, string) {
			ev, _, _ := k.kubectl(t, "get", "events", "--field-selector", "involvedObject.name=badhook,reason=FailedPostStartHook", "-o", "jsonpath={.items[*].message}")
			phase := jsonpath(t, "badhook", "{.status.phase}")
			return strings.Contains(ev, "Exec lifecycle hook ([sh -c exit 3]) for Container \"c\"") && phase == "Failed", phase + " " + ev
		})
	})

	t.Run("kubectl debug adds an ephemeral container to a running pod; it is never changed nor removed", func(t *testing.T) {
		k.mustKubectl(t, "run", "target", "--image=busybox:1.36", "--", "sleep", "3600")
		waitPhase(t, "target", "Running")
		k.mustKubectl(t, "debug", "target", "--image=busybox:1.36", "--container=debugger", "--target=target",
			"--", "sh", "-c", "echo debugging; sleep 3600")
		testserver.EventuallyWithin(t, 30*time.Second, "the debugger runs", func() (bool, string) {
			out, _, _ := k.kubectl(t, "get", "pod", "target", "-o", "jsonpath={.status.ephemeralContainerStatuses[0].name} {.status.ephemeralContainerStatuses[0].state.running.startedAt}")
			return strings.HasPrefix(out, "debugger ") && len(out) > len("debugger "), out
		})
		if got := k.mustKubectl(t, "exec", "target", "-c", "debugger", "--", "echo", "hi"); got != "hi\n" {
			t.Errorf("exec in the debugger = %q", got)
		}
		testserver.EventuallyWithin(t, 10*time.Second, "the debugger's log", func() (bool, string) {
			out, _, _ := k.kubectl(t, "logs", "target", "-c", "debugger")
			return out == "debugging\n", out
		})
		if got := jsonpath(t, "target", "{.metadata.generation}"); got != "2" {
			t.Errorf("metadata.generation = %s, want 2: adding an ephemeral container changes the spec", got)
		}
		// The same pod without its debugger, through the subresource: refused.
		var pod map[string]any
		if err := json.Unmarshal([]byte(k.mustKubectl(t, "get", "pod", "target", "-o", "json")), &pod); err != nil {
			t.Fatal(err)
		}
		delete(pod["spec"].(map[string]any), "ephemeralContainers")
		data, _ := json.Marshal(pod)
		removed := string(data)
		_, stderr, code := k.kubectl(t, "replace", "--raw", "/api/v1/namespaces/default/pods/target/ephemeralcontainers", "-f", k.manifest(t, "removed.json", removed))
		if code == 0 || !strings.Contains(stderr, `existing ephemeral containers "debugger" may not be removed`) {
			t.Errorf("removing the debugger: exit %d, stderr %s", code, stderr)
		}
		if _, stderr, code := k.kubectl(t, "apply", "-f", k.manifest(t, "eph.yaml", ephemeralOnCreatePod)); code == 0 ||
			!strings.Contains(stderr, "spec.ephemeralContainers: Forbidden: cannot be set on create") {
			t.Errorf("a pod created with an ephemeral container: exit %d, stderr %s", code, stderr)
		}
	})

	t.Run("an image volume shows the image's files, read-only", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "imagevol.yaml", imageVolumePod))
		waitPhase(t, "imagevol", "Running")
		if got := k.mustKubectl(t, "exec", "imagevol", "--", "/bin/cat", "/volume/data.json"); !strings.Contains(got, "kitten.jpg") {
			t.Errorf("/volume/data.json = %q", got)
		}
		if got := k.mustKubectl(t, "exec", "imagevol", "--", "/bin/cat", "/volume/etc/os-release"); !strings.Contains(got, "Alpine Linux") {
			t.Errorf("/volume/etc/os-release = %q", got)
		}
	})

	t.Run("kubectl logs --tail, --limit-bytes, --timestamps and --since", func(t *testing.T) {
		k.mustKubectl(t, "run", "logs-generator", "--image=registry.k8s.io/e2e-test-images/agnhost:2.55", "--restart=Never",
			"--", "logs-generator", "--log-lines-total", "100", "--run-duration", "20s")
		testserver.EventuallyWithin(t, 30*time.Second, "the generator logged a kube-system request", func() (bool, string) {
			out, _, _ := k.kubectl(t, "logs", "logs-generator")
			return strings.Contains(out, "/api/v1/namespaces/kube-system"), out
		})
		if out := k.mustKubectl(t, "logs", "logs-generator", "--tail=1"); strings.Count(out, "\n") != 1 || !strings.Contains(out, "logs_generator.go") {
			t.Errorf("--tail=1: %q", out)
		}
		if out := k.mustKubectl(t, "logs", "logs-generator", "--limit-bytes=1"); out != "I" {
			t.Errorf("--limit-bytes=1: %q, want the first byte, I", out)
		}
		out := k.mustKubectl(t, "logs", "logs-generator", "--tail=1", "--timestamps")
		if _, err := time.Parse(time.RFC3339Nano, strings.Fields(out)[0]); err != nil {
			t.Errorf("--timestamps: %q: %v", out, err)
		}
		waitPhase(t, "logs-generator", "Succeeded")
		all := k.mustKubectl(t, "logs", "logs-generator", "--since=24h")
		if n := strings.Count(all, "\n"); n != 100 {
			t.Errorf("--since=24h: %d lines, want all 100", n)
		}
		// 100 lines over 20 s: the last second holds a few at most.
		if recent := k.mustKubectl(t, "logs", "logs-generator", "--since=1s"); strings.Count(recent, "\n") > 6 {
			t.Errorf("--since=1s once the generator ended: %q, want its last lines at most", recent)
		}
	})

	t.Run("status.observedGeneration follows the pod's generation", func(t *testing.T) {
		k.mustKubectl(t, "run", "gen", "--image=busybox:1.36", "--", "sleep", "3600")
		waitPhase(t, "gen", "Running")
		// As the conformance test does: the deadline may only come closer.
		for i := range 5 {
			k.mustKubectl(t, "patch", "pod", "gen", "--type=merge", "-p", fmt.Sprintf(`{"spec":{"activeDeadlineSeconds":%d}}`, 5000-i))
		}
		testserver.EventuallyWithin(t, 30*time.Second, "observedGeneration reaches the generation", func() (bool, string) {
			out, _, _ := k.kubectl(t, "get", "pod", "gen", "-o", "jsonpath={.metadata.generation} {.status.observedGeneration} {.status.conditions[?(@.type==\"Ready\")].observedGeneration}")
			f := strings.Fields(out)
			return len(f) == 3 && f[0] == f[1] && f[1] == f[2] && f[0] != "1", out
		})
	})
}
