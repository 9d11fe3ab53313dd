package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/internal/testserver"
)

// The Kubernetes documentation's probe examples, as written, and seed
// 003 §十's goproxy pod, and a readiness probe moving a pod in and out
// of its Service's endpoints.
const probePods = `# kubernetes.io/docs/tasks/configure-pod-container/configure-liveness-readiness-startup-probes/
apiVersion: v1
kind: Pod
metadata:
  labels:
    test: liveness
  name: liveness-exec
spec:
  containers:
  - name: liveness
    image: registry.k8s.io/busybox:1.27.2
    args:
    - /bin/sh
    - -c
    - touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600
    livenessProbe:
      exec:
        command:
        - cat
        - /tmp/healthy
      initialDelaySeconds: 5
      periodSeconds: 5
---
apiVersion: v1
kind: Pod
metadata:
  labels:
    test: liveness
  name: liveness-http
spec:
  containers:
  - name: liveness
    image: registry.k8s.io/e2e-test-images/agnhost:2.40
    args:
    - liveness
    livenessProbe:
      httpGet:
        path: /healthz
        port: 8080
        httpHeaders:
        - name: Custom-Header
          value: Awesome
      initialDelaySeconds: 3
      periodSeconds: 3
---
# seed 003 §十.4
apiVersion: v1
kind: Pod
metadata:
  name: goproxy
  labels:
    app: goproxy
spec:
  containers:
    - name: goproxy
      image: k8s.gcr.io/goproxy:0.1
      ports:
        - containerPort: 8080
      readinessProbe:
        tcpSocket:
          port: 8080
        initialDelaySeconds: 5
        periodSeconds: 10
      livenessProbe:
        tcpSocket:
          port: 8080
        initialDelaySeconds: 15
        periodSeconds: 20
---
apiVersion: v1
kind: Pod
metadata:
  name: flip
  labels:
    app: flip
spec:
  containers:
  - name: app
    image: busybox:1.36
    command: [sh, -c, "touch /tmp/ready; sleep 8; rm /tmp/ready; sleep 8; touch /tmp/ready; sleep 3600"]
    ports:
    - containerPort: 80
    readinessProbe:
      exec:
        command: [cat, /tmp/ready]
      periodSeconds: 1
      failureThreshold: 1
---
apiVersion: v1
kind: Service
metadata:
  name: flip
spec:
  selector:
    app: flip
  ports:
  - port: 80
`

// TestProbes: liveness restarts a container on the documented schedule,
// with Kubernetes' events; readiness decides the container's ready, the
// pod's Ready condition and where its IP is in the Service's endpoints.
func TestProbes(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01")
	k := newKubectl(t, c)
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "probes.yaml", probePods))
	pod := func(name string) corev1.Pod {
		var p corev1.Pod
		out := k.mustKubectl(t, "get", "pod", name, "-o", "json")
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ready := func(p corev1.Pod) (corev1.ConditionStatus, time.Time) {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				return c.Status, c.LastTransitionTime.Time
			}
		}
		return "", time.Time{}
	}

	// The readiness flip: in addresses while /tmp/ready exists (0-8 s),
	// in notReadyAddresses while it does not (8-16 s), back after.
	endpoints := func() string {
		out, _, _ := k.kubectl(t, "get", "endpoints", "flip", "-o",
			"jsonpath={.subsets[*].addresses[*].ip}|{.subsets[*].notReadyAddresses[*].ip}")
		return out
	}
	for _, stage := range []struct{ what, want string }{
		{"ready: in addresses", "ready"}, {"not ready: in notReadyAddresses", "notReady"}, {"ready again", "ready"},
	} {
		testserver.EventuallyWithin(t, 30*time.Second, "flip "+stage.what, func() (bool, string) {
			e := endpoints()
			addrs, notReady, _ := strings.Cut(e, "|")
			if stage.want == "ready" {
				return addrs != "" && notReady == "", e
			}
			return addrs == "" && notReady != "", e
		})
	}

	// goproxy: Ready at the readiness probe's first run after its
	// 5 s initial delay, which is the 10 s tick.
	testserver.EventuallyWithin(t, 30*time.Second, "goproxy Ready", func() (bool, string) {
		s, _ := ready(pod("goproxy"))
		return s == corev1.ConditionTrue, string(s)
	})
	gp := pod("goproxy")
	_, at := ready(gp)
	if d := at.Sub(gp.Status.ContainerStatuses[0].State.Running.StartedAt.Time); d < 5*time.Second || d > 13*time.Second {
		t.Errorf("goproxy became Ready %v after it started, want about 10 s (initialDelaySeconds 5, periodSeconds 10)", d)
	}

	// liveness-http: /healthz answers 500 after 10 s; probes every 3 s,
	// three failures: killed at about 18 s and restarted.
	testserver.EventuallyWithin(t, 60*time.Second, "liveness-http restarted", func() (bool, string) {
		p := pod("liveness-http")
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1, string(p.Status.Phase)
	})
	// liveness-exec: /tmp/healthy goes at 30 s; probes every 5 s, three
	// failures: killed at about 40 s; its sh, PID 1, ignores SIGTERM, so
	// it dies when the 30 s grace period ends, and then restarts.
	testserver.EventuallyWithin(t, 120*time.Second, "liveness-exec restarted", func() (bool, string) {
		p := pod("liveness-exec")
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1, string(p.Status.Phase)
	})
	le := pod("liveness-exec").Status.ContainerStatuses[0].LastTerminationState.Terminated
	if ran := le.FinishedAt.Sub(le.StartedAt.Time); ran < 65*time.Second || ran > 80*time.Second {
		t.Errorf("liveness-exec's first instance ran %v, want about 70 s (killed at ~40 s, after a 30 s grace period)", ran)
	}
	events := k.mustKubectl(t, "get", "events", "--field-selector", "involvedObject.name=liveness-exec", "-o", "jsonpath={range .items[*]}{.reason}: {.message}{\"\\n\"}{end}")
	for _, want := range []string{
		"Unhealthy: Liveness probe failed: cat: can't open '/tmp/healthy': No such file or directory",
		"Killing: Container liveness failed liveness probe, will be restarted",
	} {
		if !strings.Contains(events, want) {
			t.Errorf("liveness-exec events lack %q:\n%s", want, events)
		}
	}
	events = k.mustKubectl(t, "get", "events", "--field-selector", "involvedObject.name=liveness-http", "-o", "jsonpath={range .items[*]}{.reason}: {.message}{\"\\n\"}{end}")
	if want := "Unhealthy: Liveness probe failed: HTTP probe failed with statuscode: 500"; !strings.Contains(events, want) {
		t.Errorf("liveness-http events lack %q:\n%s", want, events)
	}
}
