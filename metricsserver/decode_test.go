package metricsserver

import (
	"strings"
	"testing"
	"time"
)

// kubeletText is /metrics/resource as a kubelet writes it.
const kubeletText = `# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="app",namespace="default",pod="web"} 12.5 1700000010000
container_cpu_usage_seconds_total{container="sidecar",namespace="default",pod="web"} 0.25 1700000010000
container_cpu_usage_seconds_total{container="idle",namespace="default",pod="fresh"} 0 1700000010000
# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="app",namespace="default",pod="web"} 1.048576e+07 1700000010000
container_memory_working_set_bytes{container="sidecar",namespace="default",pod="web"} 2.097152e+06 1700000010000
container_memory_working_set_bytes{container="idle",namespace="default",pod="fresh"} 1.048576e+06 1700000010000
# HELP container_start_time_seconds [STABLE] Start time of the container since unix epoch in seconds
# TYPE container_start_time_seconds gauge
container_start_time_seconds{container="app",namespace="default",pod="web"} 1.7e+09 1700000000000
# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total 100.5 1700000010000
# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 1.073741824e+09 1700000010000
`

func TestDecodeReadsTheKubeletsSeriesAndDropsWhatReadsZero(t *testing.T) {
	batch, err := decodeBatch("node01", strings.NewReader(kubeletText), time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	node, ok := batch.Nodes["node01"]
	if !ok || node.CumulativeCPUUsed != 100_500_000_000 || node.MemoryUsage != 1<<30 || !node.Timestamp.Equal(time.UnixMilli(1700000010000)) {
		t.Errorf("node point = %+v, %v", node, ok)
	}
	web := batch.Pods[PodRef{"default", "web"}]
	if len(web) != 2 || web["app"].CumulativeCPUUsed != 12_500_000_000 || web["app"].MemoryUsage != 10<<20 ||
		!web["app"].StartTime.Equal(time.Unix(1_700_000_000, 0)) || web["sidecar"].CumulativeCPUUsed != 250_000_000 {
		t.Errorf("pod web = %+v", web)
	}
	if _, ok := batch.Pods[PodRef{"default", "fresh"}]; ok {
		t.Error("a pod with a container reading 0 CPU is kept; metrics-server drops it")
	}
}

func TestDecodeDropsANodeReadingZero(t *testing.T) {
	for _, text := range []string{
		"node_cpu_usage_seconds_total 0\nnode_memory_working_set_bytes 1000\n",
		"node_cpu_usage_seconds_total 5\nnode_memory_working_set_bytes 0\n",
		"node_cpu_usage_seconds_total 5\n",
	} {
		batch, err := decodeBatch("n", strings.NewReader(text), time.Unix(100, 0))
		if err != nil {
			t.Fatal(err)
		}
		if len(batch.Nodes) != 0 {
			t.Errorf("%q: node kept: %+v", text, batch.Nodes)
		}
	}
	batch, _ := decodeBatch("n", strings.NewReader("node_cpu_usage_seconds_total 5\nnode_memory_working_set_bytes 7\n"), time.Unix(100, 0))
	if p := batch.Nodes["n"]; !p.Timestamp.Equal(time.Unix(100, 0)) {
		t.Errorf("a series without a timestamp is not stamped with the scrape's time: %v", p.Timestamp)
	}
}
