package metricsserver

import (
	"io"
	"math"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// A MetricsPoint is one kubelet's cumulative reading of a node or a
// container, as metrics-server's storage keeps it.
type MetricsPoint struct {
	StartTime         time.Time // the container's start (container_start_time_seconds); zero for a node
	Timestamp         time.Time // when the kubelet read it
	CumulativeCPUUsed uint64    // CPU time used since start, in nanoseconds
	MemoryUsage       uint64    // working set, in bytes
}

// PodRef names a pod.
type PodRef struct{ Namespace, Name string }

// PodPoints are a pod's containers' points, by container name.
type PodPoints map[string]MetricsPoint

// A MetricsBatch is what one or more scrapes of /metrics/resource read.
type MetricsBatch struct {
	Nodes map[string]MetricsPoint
	Pods  map[PodRef]PodPoints
}

// The series of the kubelet's /metrics/resource that metrics-server reads.
const (
	nodeCPUSeries         = "node_cpu_usage_seconds_total"
	nodeMemorySeries      = "node_memory_working_set_bytes"
	containerCPUSeries    = "container_cpu_usage_seconds_total"
	containerMemorySeries = "container_memory_working_set_bytes"
	containerStartSeries  = "container_start_time_seconds"
)

// decodeBatch parses one kubelet's /metrics/resource (the Prometheus
// text format) into the batch of node: each series' millisecond
// timestamp is its point's, or scrapeTime if it has none. As
// metrics-server's decoder, it keeps the node only if both its
// cumulative CPU and its memory are non-zero, and a pod only if every
// container's are: a kubelet that reports zeros has no metrics yet.
func decodeBatch(node string, body io.Reader, scrapeTime time.Time) (*MetricsBatch, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(body)
	if err != nil {
		return nil, err
	}
	var nodePoint MetricsPoint
	pods := map[PodRef]PodPoints{}
	update := func(m *dto.Metric, set func(p *MetricsPoint)) {
		ref, name := containerOf(m)
		if pods[ref] == nil {
			pods[ref] = PodPoints{}
		}
		p := pods[ref][name]
		set(&p)
		pods[ref][name] = p
	}
	stamp := func(m *dto.Metric) time.Time {
		if m.TimestampMs == nil {
			return scrapeTime
		}
		return time.UnixMilli(m.GetTimestampMs())
	}
	for name, fam := range families {
		for _, m := range fam.GetMetric() {
			value := sampleValue(m)
			switch name {
			case nodeCPUSeries:
				nodePoint.CumulativeCPUUsed, nodePoint.Timestamp = nanoseconds(value), stamp(m)
			case nodeMemorySeries:
				nodePoint.MemoryUsage, nodePoint.Timestamp = uint64(value), stamp(m)
			case containerCPUSeries:
				update(m, func(p *MetricsPoint) { p.CumulativeCPUUsed, p.Timestamp = nanoseconds(value), stamp(m) })
			case containerMemorySeries:
				update(m, func(p *MetricsPoint) { p.MemoryUsage, p.Timestamp = uint64(value), stamp(m) })
			case containerStartSeries:
				sec, frac := math.Modf(value)
				update(m, func(p *MetricsPoint) { p.StartTime = time.Unix(int64(sec), int64(frac*1e9)) })
			}
		}
	}
	batch := &MetricsBatch{Nodes: map[string]MetricsPoint{}, Pods: map[PodRef]PodPoints{}}
	if nodePoint.CumulativeCPUUsed != 0 && nodePoint.MemoryUsage != 0 {
		batch.Nodes[node] = nodePoint
	}
	for ref, containers := range pods {
		if len(containers) > 0 && allNonZero(containers) {
			batch.Pods[ref] = containers
		}
	}
	return batch, nil
}

// containerOf is the pod and container a container series is labelled with.
func containerOf(m *dto.Metric) (ref PodRef, container string) {
	for _, l := range m.GetLabel() {
		switch l.GetName() {
		case "namespace":
			ref.Namespace = l.GetValue()
		case "pod":
			ref.Name = l.GetValue()
		case "container":
			container = l.GetValue()
		}
	}
	return ref, container
}

// allNonZero says whether every container read CPU and memory.
func allNonZero(containers PodPoints) bool {
	for _, p := range containers {
		if p.CumulativeCPUUsed == 0 || p.MemoryUsage == 0 {
			return false
		}
	}
	return true
}

// sampleValue is a counter's or gauge's value (the kubelet writes its
// resource series as either, and untyped parses too).
func sampleValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	default:
		return m.GetUntyped().GetValue()
	}
}

// nanoseconds turns CPU seconds into the nanoseconds the storage counts.
func nanoseconds(seconds float64) uint64 {
	if seconds <= 0 {
		return 0
	}
	return uint64(seconds * 1e9)
}
