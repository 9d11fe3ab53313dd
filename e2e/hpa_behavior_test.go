package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// spinDeployment's pods each run a busy shell loop, a core against a
// 100m request (1000% of it), until /tmp/stop exists; then they sleep.
const spinDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: spin
spec:
  replicas: 1
  selector:
    matchLabels: {app: spin}
  template:
    metadata:
      labels: {app: spin}
    spec:
      containers:
      - name: spin
        image: busybox
        command: [sh, -c, "while [ ! -e /tmp/stop ]; do :; done; sleep 3600"]
        resources:
          requests: {cpu: 100m}
`

// spinHPA wants 50% of the request, and its behavior holds it back: up
// by the smaller of one pod and 100% per 2 s (selectPolicy Min: +1 at
// every size; the larger would be 1 → 2 → 4), and down only after 15 s
// of lower recommendations. A period of 2 s, not the API's minimum of 1,
// so that a step per period is told apart from a step per sync.
const spinHPA = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: spin
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: spin}
  minReplicas: 1
  maxReplicas: 4
  metrics:
  - type: Resource
    resource:
      name: cpu
      target: {type: Utilization, averageUtilization: 50}
  behavior:
    scaleUp:
      stabilizationWindowSeconds: 0
      selectPolicy: Min
      policies:
      - {type: Pods, value: 1, periodSeconds: 2}
      - {type: Percent, value: 100, periodSeconds: 2}
    scaleDown:
      stabilizationWindowSeconds: 15
`

// An autoscaling/v2 HPA's behavior, under a load that wants many more
// replicas than there are (1000% of the request against a 50% target):
// the scale-up policies let the Deployment grow one pod per period,
// 1 → 2 → 3 → 4, each step at least a period after the last while the
// controller syncs every 500 ms, and the HPA says ScaleUpLimit in
// Kubernetes' words meanwhile. When the load stops, the scale-down
// stabilization window holds the 4 replicas (ScaleDownStabilized) for
// its 15 s before they go. The CPU is the pods' own, through the
// kubelet and the metrics-server add-on.
func TestHPABehaviorLimitsTheScaleUpRateAndHoldsTheScaleDown(t *testing.T) {
	t.Parallel()
	const period, window = 2 * time.Second, 15 * time.Second
	_, k := startClusterWithMetricsServer(t, "--horizontal-pod-autoscaler-sync-period", "500ms")
	t.Cleanup(func() {
		if t.Failed() {
			hpa, _, _ := k.kubectl(t, "describe", "hpa", "spin")
			t.Logf("kubectl describe hpa spin:\n%s", hpa)
		}
	})
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "spin.yaml", spinDeployment+"---\n"+spinHPA))
	replicas := k.kubectlWatch(t, "deployment", "spin", "-o", `jsonpath={.spec.replicas}{"\n"}`)
	// current|desired|AbleToScale's reason|ScalingLimited's reason: message|cpu utilization
	hpa := k.kubectlWatch(t, "hpa", "spin", "-o", `jsonpath={.status.currentReplicas}|{.status.desiredReplicas}|`+
		`{.status.conditions[?(@.type=="AbleToScale")].reason}|`+
		`{.status.conditions[?(@.type=="ScalingLimited")].reason}: {.status.conditions[?(@.type=="ScalingLimited")].message}|`+
		`{.status.currentMetrics[*].resource.current.averageUtilization}{"\n"}`)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kubectl get hpa spin --watch (current|desired|AbleToScale|ScalingLimited|cpu):\n%s", linesText(changes(hpa()), "\n"))
		}
	})

	testserver.EventuallyWithin(t, 150*time.Second, "the HPA scales spin up to maxReplicas", func() (bool, string) {
		lines := changes(replicas())
		return len(lines) > 0 && lines[len(lines)-1].text == "4", linesText(lines, " ")
	})
	up := changes(replicas())
	if got := linesText(up, " "); got != "1 2 3 4" {
		t.Fatalf("spec.replicas went %s, want 1 2 3 4: one pod per period", got)
	}
	if ramp := up[3].at.Sub(up[1].at); ramp < 2*period-time.Second {
		t.Errorf("2 → 4 took %v, want about two periods (%v): the policies' period was not waited for", ramp, 2*period)
	}
	const scaleUpLimit = "ScaleUpLimit: the desired replica count is increasing faster than the maximum scale rate"
	if !hasField(hpa(), 3, scaleUpLimit) {
		t.Errorf("the HPA's ScalingLimited never said %q:\n%s", scaleUpLimit, linesText(changes(hpa()), "\n"))
	}
	out := k.mustKubectl(t, "describe", "hpa", "spin")
	for _, n := range []string{"2", "3", "4"} {
		if !regexp.MustCompile(`Normal\s+SuccessfulRescale\s+.*horizontal-pod-autoscaler\s+New size: ` + n + `; reason: cpu resource utilization \(percentage of request\) above target`).MatchString(out) {
			t.Errorf("kubectl describe hpa has no rescale to %s:\n%s", n, out)
		}
	}
	t.Logf("kubectl describe hpa spin at maxReplicas:\n%s", out)

	// The load stops: each pod leaves its loop.
	testserver.EventuallyWithin(t, 60*time.Second, "spin's 4 pods are available", func() (bool, string) {
		got := k.mustKubectl(t, "get", "deployment", "spin", "-o", "jsonpath={.status.availableReplicas}")
		return got == "4", got
	})
	stopped := time.Now()
	for _, pod := range strings.Fields(k.mustKubectl(t, "get", "pods", "-l", "app=spin", "-o", "jsonpath={.items[*].metadata.name}")) {
		k.mustKubectl(t, "exec", pod, "--", "touch", "/tmp/stop")
	}
	testserver.EventuallyWithin(t, 120*time.Second, "the HPA scales spin back down", func() (bool, string) {
		lines := changes(replicas())
		return lines[len(lines)-1].text == "1", linesText(lines, " ")
	})
	down := changes(replicas())[len(up):]
	// The first sync with a lower recommendation says the window holds
	// the count; the sync before recommended at least 4, so the window
	// ends a window after that, which is the first step down.
	var stabilized time.Time
	for _, l := range changes(hpa()) {
		f := strings.Split(l.text, "|")
		if len(f) == 5 && f[2] == "ScaleDownStabilized" && l.at.After(stopped) {
			if f[0] != "4" || f[1] != "4" {
				t.Errorf("ScaleDownStabilized with current|desired %s|%s, want 4|4", f[0], f[1])
			}
			stabilized = l.at
			break
		}
	}
	if stabilized.IsZero() {
		t.Fatalf("the HPA never said ScaleDownStabilized:\n%s", linesText(changes(hpa()), "\n"))
	}
	if held := down[0].at.Sub(stabilized); held < window-3*time.Second {
		t.Errorf("the replicas went down %v after the HPA said ScaleDownStabilized, want about the %v window", held, window)
	} else {
		t.Logf("held at 4 for %v after ScaleDownStabilized; down: %s", held.Round(100*time.Millisecond), linesText(down, " "))
	}
	if out := k.mustKubectl(t, "describe", "hpa", "spin"); !strings.Contains(out, "reason: All metrics below target") {
		t.Errorf("kubectl describe hpa has no rescale below target:\n%s", out)
	}
}

// linesText is the lines' texts, joined by sep.
func linesText(lines []timedLine, sep string) string {
	texts := make([]string, len(lines))
	for i, l := range lines {
		texts[i] = l.text
	}
	return strings.Join(texts, sep)
}

// hasField says whether a |-separated line has want as its field i.
func hasField(lines []timedLine, i int, want string) bool {
	for _, l := range lines {
		if f := strings.Split(l.text, "|"); len(f) > i && f[i] == want {
			return true
		}
	}
	return false
}
