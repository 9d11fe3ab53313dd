package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mkube/mkube/kubelet/stats"
)

// Snapshotter reads a node's usage now (a stats.Provider).
type Snapshotter interface {
	Snapshot(ctx context.Context) (*stats.Snapshot, error)
}

// collectTimeout bounds the CRI calls of one scrape.
const collectTimeout = 10 * time.Second

var (
	containerLabels = []string{"container", "pod", "namespace"}
	podLabels       = []string{"pod", "namespace"}

	nodeCPUUsageDesc = prometheus.NewDesc("node_cpu_usage_seconds_total",
		"Cumulative cpu time consumed by the node in core-seconds", nil, nil)
	nodeMemoryUsageDesc = prometheus.NewDesc("node_memory_working_set_bytes",
		"Current working set of the node in bytes", nil, nil)
	containerCPUUsageDesc = prometheus.NewDesc("container_cpu_usage_seconds_total",
		"Cumulative cpu time consumed by the container in core-seconds", containerLabels, nil)
	containerMemoryUsageDesc = prometheus.NewDesc("container_memory_working_set_bytes",
		"Current working set of the container in bytes", containerLabels, nil)
	containerStartTimeDesc = prometheus.NewDesc("container_start_time_seconds",
		"Start time of the container since unix epoch in seconds", containerLabels, nil)
	podCPUUsageDesc = prometheus.NewDesc("pod_cpu_usage_seconds_total",
		"Cumulative cpu time consumed by the pod in core-seconds", podLabels, nil)
	podMemoryUsageDesc = prometheus.NewDesc("pod_memory_working_set_bytes",
		"Current working set of the pod in bytes", podLabels, nil)
	scrapeErrorDesc = prometheus.NewDesc("scrape_error",
		"1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
	resourceScrapeErrorDesc = prometheus.NewDesc("resource_scrape_error",
		"1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
)

// ResourceCollector is /metrics/resource (upstream's
// collectors/resource_metrics.go): what metrics-server scrapes. Each
// sample carries the time the runtime measured it, as the kubelet writes
// them, since metrics-server computes rates from those times.
type ResourceCollector struct{ Source Snapshotter }

func (c ResourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{nodeCPUUsageDesc, nodeMemoryUsageDesc, containerCPUUsageDesc, containerMemoryUsageDesc,
		containerStartTimeDesc, podCPUUsageDesc, podMemoryUsageDesc, scrapeErrorDesc, resourceScrapeErrorDesc} {
		ch <- d
	}
}

func (c ResourceCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), collectTimeout)
	defer cancel()
	snap, err := c.Source.Snapshot(ctx)
	failed := 0.0
	if err != nil {
		failed = 1
	}
	ch <- prometheus.MustNewConstMetric(scrapeErrorDesc, prometheus.GaugeValue, failed)
	ch <- prometheus.MustNewConstMetric(resourceScrapeErrorDesc, prometheus.GaugeValue, failed)
	if err != nil {
		return
	}
	n := snap.Node
	ch <- at(n.CPU.Time, prometheus.MustNewConstMetric(nodeCPUUsageDesc, prometheus.CounterValue, coreSeconds(n.CPU)))
	ch <- at(n.Memory.Time, prometheus.MustNewConstMetric(nodeMemoryUsageDesc, prometheus.GaugeValue, float64(n.Memory.WorkingSetBytes)))
	for _, p := range snap.Pods {
		ch <- at(p.CPU.Time, prometheus.MustNewConstMetric(podCPUUsageDesc, prometheus.CounterValue, coreSeconds(p.CPU), p.Name, p.Namespace))
		ch <- at(p.Memory.Time, prometheus.MustNewConstMetric(podMemoryUsageDesc, prometheus.GaugeValue, float64(p.Memory.WorkingSetBytes), p.Name, p.Namespace))
		for _, ctr := range p.Containers {
			labels := []string{ctr.Name, p.Name, p.Namespace}
			ch <- at(ctr.StartTime, prometheus.MustNewConstMetric(containerStartTimeDesc, prometheus.GaugeValue, unixSeconds(ctr.StartTime), labels...))
			ch <- at(ctr.CPU.Time, prometheus.MustNewConstMetric(containerCPUUsageDesc, prometheus.CounterValue, coreSeconds(ctr.CPU), labels...))
			ch <- at(ctr.Memory.Time, prometheus.MustNewConstMetric(containerMemoryUsageDesc, prometheus.GaugeValue, float64(ctr.Memory.WorkingSetBytes), labels...))
		}
	}
}

// at stamps m with t, in milliseconds as the exposition writes it.
func at(t time.Time, m prometheus.Metric) prometheus.Metric {
	return prometheus.NewMetricWithTimestamp(t, m)
}

func coreSeconds(c stats.CPU) float64 { return float64(c.UsageCoreNanoSeconds) / 1e9 }

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
