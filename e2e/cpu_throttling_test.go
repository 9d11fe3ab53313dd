package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/mkube/mkube/internal/testserver"
)

// throttledPods: a busy loop under a 200m limit, next to an idle
// container with the same limit, and a busy loop without one.
const throttledPods = `apiVersion: v1
kind: Pod
metadata:
  name: capped
spec:
  containers:
  - name: spin
    image: busybox
    command: [sh, -c, "while true; do :; done"]
    resources:
      limits: {cpu: 200m}
  - name: idle
    image: busybox
    command: [sh, -c, "while true; do sleep 1; done"]
    resources:
      limits: {cpu: 200m}
---
apiVersion: v1
kind: Pod
metadata:
  name: uncapped
spec:
  containers:
  - name: spin
    image: busybox
    command: [sh, -c, "while true; do :; done"]
`

// A busy loop is held at its container's CPU limit, as the kernel's CFS
// quota holds it: kubectl top shows 200m for it (not the 1000m it
// wants, which the loop without a limit gets), and the kubelet's
// /metrics/cadvisor, read through the API server's node proxy, counts
// the enforcement periods and the throttled ones rising together, while
// the idle container with the same limit is never throttled. The bounds
// are ±25% around 200m and 1000m: loose for a loaded machine (the
// runtime accounts CPU on its clock, not by the host's scheduler), and
// far from what an unthrottled loop would show.
func TestABusyLoopIsThrottledAtItsCPULimit(t *testing.T) {
	t.Parallel()
	_, k := startClusterWithMetricsServer(t)
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "pods.yaml", throttledPods))

	// kubectl top pod, once both loops have run a whole resolution: the
	// unlimited one shows most of a core, and the capped one its limit.
	var top map[string]int64
	testserver.EventuallyWithin(t, 120*time.Second, "kubectl top pod --containers shows both busy loops", func() (bool, string) {
		out, errOut, code := k.kubectl(t, "top", "pod", "--containers")
		if code != 0 {
			return false, errOut
		}
		top = topMillicores(t, out, "POD", "NAME")
		_, idle := top["capped/idle"]
		return idle && top["uncapped/spin"] >= 800 && top["capped/spin"] >= 150, out
	})
	for name, bounds := range map[string][2]int64{"capped/spin": {150, 250}, "capped/idle": {0, 10}, "uncapped/spin": {800, 1200}} {
		if got := top[name]; got < bounds[0] || got > bounds[1] {
			t.Errorf("kubectl top pod --containers: %s uses %dm, want %dm to %dm", name, got, bounds[0], bounds[1])
		}
	}
	out := k.mustKubectl(t, "top", "pod")
	t.Logf("kubectl top pod:\n%s", out)
	pods := topMillicores(t, out, "NAME")
	if got := pods["capped"]; got < 150 || got > 260 {
		t.Errorf("kubectl top pod: capped uses %dm, want about its 200m limit", got)
	}
	if got := pods["uncapped"]; got < 800 || got > 1200 {
		t.Errorf("kubectl top pod: uncapped uses %dm, want about a core", got)
	}

	// /metrics/cadvisor, read twice: between the reads the capped loop
	// was throttled in every period, at 0.2 CPU-seconds a second.
	scrape := func() map[string]*dto.MetricFamily {
		return parseMetrics(t, k.mustKubectl(t, "get", "--raw", "/api/v1/nodes/node01/proxy/metrics/cadvisor"))
	}
	first := scrape()
	var second map[string]*dto.MetricFamily
	testserver.EventuallyWithin(t, 30*time.Second, "container_cpu_cfs_throttled_periods_total rises", func() (bool, string) {
		second = scrape()
		thr := delta(t, first, second, "container_cpu_cfs_throttled_periods_total", "capped", "spin")
		return thr.value > 0 && thr.seconds >= 2, fmt.Sprintf("%+v", thr)
	})
	periods := delta(t, first, second, "container_cpu_cfs_periods_total", "capped", "spin")
	throttled := delta(t, first, second, "container_cpu_cfs_throttled_periods_total", "capped", "spin")
	if periods.value < 10 || throttled.value < 0.9*periods.value {
		t.Errorf("capped/spin: %v periods, %v throttled between two reads %v apart; want ten a second, nearly all throttled",
			periods.value, throttled.value, periods.seconds)
	}
	t.Logf("capped/spin between two reads of /metrics/cadvisor %vs apart: container_cpu_cfs_periods_total +%v, container_cpu_cfs_throttled_periods_total +%v",
		periods.seconds, periods.value, throttled.value)
	for _, tc := range []struct {
		pod, container string
		min, max       float64 // cores
	}{{"capped", "spin", 0.15, 0.25}, {"capped", "idle", 0, 0.01}, {"uncapped", "spin", 0.8, 1.2}} {
		usage := delta(t, first, second, "container_cpu_usage_seconds_total", tc.pod, tc.container)
		if rate := usage.value / usage.seconds; rate < tc.min || rate > tc.max {
			t.Errorf("%s/%s: container_cpu_usage_seconds_total rose %v in %vs (%.3f cores), want %v to %v cores",
				tc.pod, tc.container, usage.value, usage.seconds, rate, tc.min, tc.max)
		}
	}
	if idle := delta(t, first, second, "container_cpu_cfs_throttled_periods_total", "capped", "idle"); idle.value != 0 {
		t.Errorf("capped/idle was throttled in %v periods, want none: it never wants its quota", idle.value)
	}
	labels := map[string]string{"pod": "capped", "container": "spin"}
	if m := findMetric(second["container_spec_cpu_quota"], labels); m == nil || metricValue(m) != 20000 {
		t.Errorf("capped/spin container_spec_cpu_quota = %v, want 20000 (200m of a 100000 µs period)", m)
	}
	// cAdvisor counts CFS periods only for a container with a quota.
	if m := findMetric(second["container_cpu_cfs_periods_total"], map[string]string{"pod": "uncapped", "container": "spin"}); m != nil {
		t.Errorf("uncapped/spin has container_cpu_cfs_periods_total %v, want none without a limit", m)
	}
}

// topMillicores reads kubectl top's CPU(cores) column ("200m") by the
// row's key columns joined with "/".
func topMillicores(t *testing.T, out string, keys ...string) map[string]int64 {
	t.Helper()
	usage := map[string]int64{}
	for _, row := range parseTable(t, out).rows {
		var key []string
		for _, k := range keys {
			key = append(key, row[k])
		}
		m, err := strconv.ParseInt(strings.TrimSuffix(row["CPU(cores)"], "m"), 10, 64)
		if err != nil {
			t.Fatalf("kubectl top: CPU %q of %v: %v\n%s", row["CPU(cores)"], key, err, out)
		}
		usage[strings.Join(key, "/")] = m
	}
	return usage
}

// counterDelta is how much a counter rose between two reads, and the
// time between the samples (the kubelet stamps each with when the
// runtime measured it).
type counterDelta struct {
	value, seconds float64
}

// delta is the rise of family's counter of pod's container from one
// scrape to the next; a missing series fails the test.
func delta(t *testing.T, first, second map[string]*dto.MetricFamily, family, pod, container string) counterDelta {
	t.Helper()
	labels := map[string]string{"pod": pod, "container": container}
	a, b := findMetric(first[family], labels), findMetric(second[family], labels)
	if a == nil || b == nil {
		t.Fatalf("/metrics/cadvisor has no %s of %s/%s in both reads", family, pod, container)
	}
	return counterDelta{value: metricValue(b) - metricValue(a), seconds: float64(b.GetTimestampMs()-a.GetTimestampMs()) / 1000}
}
