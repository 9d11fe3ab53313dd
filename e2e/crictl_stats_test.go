package e2e

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// TestCrictlStatsShowTheCPUContainersUse runs bin/runtime alone with
// three containers in one pod, a busy shell loop, `yes > /dev/null`
// under a 500m limit, and a loop that sleeps, and reads them with the
// real crictl: `crictl stats` shows a core, half a core and almost
// nothing (crictl takes the rate between two reads of the cumulative
// usage a second apart), `crictl statsp` the pod's sum, and the capped
// container's cpu.stat counts the periods its quota throttled.
func TestCrictlStatsShowTheCPUContainersUse(t *testing.T) {
	t.Parallel()
	rt := startStandaloneRuntime(t, nil)
	crictl, dir := rt.crictl, rt.dir

	crictl.must(t, "pull", "busybox:1.36")
	pod := writeJSON(t, dir, "pod.json", map[string]any{
		"metadata":      map[string]any{"name": "load", "namespace": "default", "uid": "uid-load"},
		"log_directory": filepath.Join(dir, "pods", "default_load_uid-load"),
	})
	podID := strings.TrimSpace(crictl.must(t, "runp", pod))
	containers := []struct {
		name, script string
		quota        int64
		min, max     float64 // CPU %
	}{
		{"busy", "while true; do :; done", 0, 99, 101},
		{"capped", "yes > /dev/null", 50000, 49, 51},
		{"idle", "while true; do sleep 1; done", 0, 0, 0.01},
	}
	for _, c := range containers {
		cfg := map[string]any{
			"metadata": map[string]any{"name": c.name},
			"image":    map[string]any{"image": "busybox:1.36"},
			"command":  []string{"sh", "-c", c.script},
			"log_path": c.name + "/0.log",
		}
		if c.quota > 0 {
			cfg["linux"] = map[string]any{"resources": map[string]any{"cpu_period": 100000, "cpu_quota": c.quota}}
		}
		id := strings.TrimSpace(crictl.must(t, "create", podID, writeJSON(t, dir, c.name+".json", cfg), pod))
		crictl.must(t, "start", id)
	}

	// crictl stats: CPU % is the usage between its two reads over the
	// time between them, on the runtime's clock.
	// stats and statsp clear the screen first (ESC [2J ESC [H), as a
	// top-like view does: the table is what follows.
	stats := func(args ...string) (table kubeTable, out string) {
		t.Helper()
		out = crictl.must(t, args...)
		if i := strings.LastIndex(out, "\x1b[H"); i >= 0 {
			out = out[i+len("\x1b[H"):]
		}
		return parseTable(t, out), out
	}
	percent := func(row map[string]string, column string) float64 {
		t.Helper()
		v, err := strconv.ParseFloat(row[column], 64)
		if err != nil {
			t.Fatalf("%s %q in %v: %v", column, row[column], row, err)
		}
		return v
	}
	testserver.EventuallyWithin(t, 30*time.Second, "crictl stats shows a core, half a core and almost nothing", func() (bool, string) {
		table, out := stats("stats")
		for _, c := range containers {
			if cpu := percent(table.row(t, "NAME", c.name), "CPU %"); cpu < c.min || cpu > c.max {
				return false, out
			}
		}
		t.Logf("crictl stats:\n%s", out)
		return true, out
	})
	testserver.EventuallyWithin(t, 30*time.Second, "crictl statsp shows the pod's core and a half", func() (bool, string) {
		table, out := stats("statsp")
		cpu := percent(table.row(t, "POD", "load"), "CPU %")
		t.Logf("crictl statsp:\n%s", out)
		return cpu > 148 && cpu < 152, out
	})

	// The capped container's cgroup says why it gets half a core.
	capped := parseTable(t, crictl.must(t, "ps", "--name", "capped")).rows[0]["CONTAINER"]
	stat := crictl.must(t, "exec", "-s", capped, "cat", "/sys/fs/cgroup/cpu.stat")
	fields := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(stat), "\n") {
		k, v, _ := strings.Cut(line, " ")
		fields[k], _ = strconv.ParseInt(v, 10, 64)
	}
	t.Logf("crictl exec capped cat /sys/fs/cgroup/cpu.stat:\n%s", stat)
	if fields["nr_periods"] == 0 || fields["nr_throttled"] < fields["nr_periods"]-1 || fields["throttled_usec"] < fields["nr_throttled"]*49000 {
		t.Errorf("the capped container's cpu.stat:\n%s\nwant every period throttled, some 50 ms each", stat)
	}
}
