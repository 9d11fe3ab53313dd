package metrics

import (
	"context"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mkube/mkube/kubelet/stats"
)

// cAdvisor's labels on a container's series: the Kubernetes names, the
// cgroup (id), the image and the runtime's name for the container.
var cadvisorLabels = []string{"container", "id", "image", "name", "namespace", "pod"}

func cadvisorDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, cadvisorLabels, nil)
}

var (
	cadvisorCPUUsage         = cadvisorDesc("container_cpu_usage_seconds_total", "Cumulative cpu time consumed in seconds.")
	cadvisorCFSPeriods       = cadvisorDesc("container_cpu_cfs_periods_total", "Number of elapsed enforcement period intervals.")
	cadvisorCFSThrottled     = cadvisorDesc("container_cpu_cfs_throttled_periods_total", "Number of throttled period intervals.")
	cadvisorCFSThrottledSecs = cadvisorDesc("container_cpu_cfs_throttled_seconds_total", "Total time duration the container has been throttled.")
	cadvisorWorkingSet       = cadvisorDesc("container_memory_working_set_bytes", "Current working set in bytes.")
	cadvisorRSS              = cadvisorDesc("container_memory_rss", "Size of RSS in bytes.")
	cadvisorCPUQuota         = cadvisorDesc("container_spec_cpu_quota", "CPU quota of the container.")
	cadvisorCPUPeriod        = cadvisorDesc("container_spec_cpu_period", "CPU period of the container.")
	cadvisorMemoryLimit      = cadvisorDesc("container_spec_memory_limit_bytes", "Memory limit for the container.")
	cadvisorStartTime        = cadvisorDesc("container_start_time_seconds", "Start time of the container since unix epoch in seconds.")
	machineCores             = prometheus.NewDesc("machine_cpu_cores", "Number of logical CPU cores.", []string{"boot_id", "machine_id", "system_uuid"}, nil)
	machineMemory            = prometheus.NewDesc("machine_memory_bytes", "Amount of memory installed on the machine.", []string{"boot_id", "machine_id", "system_uuid"}, nil)
)

// CadvisorCollector is /metrics/cadvisor: the container_* series cAdvisor
// computes from cgroups, here from the same CRI snapshot. A pod's own
// cgroup is a series with container="" too, as cAdvisor's; the machine
// is the node's capacity.
type CadvisorCollector struct {
	Source Snapshotter
	// MachineID is the node's status.nodeInfo.machineID.
	MachineID string
}

func (c CadvisorCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cadvisorCPUUsage, cadvisorCFSPeriods, cadvisorCFSThrottled, cadvisorCFSThrottledSecs,
		cadvisorWorkingSet, cadvisorRSS, cadvisorCPUQuota, cadvisorCPUPeriod, cadvisorMemoryLimit, cadvisorStartTime, machineCores, machineMemory} {
		ch <- d
	}
}

func (c CadvisorCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), collectTimeout)
	defer cancel()
	snap, err := c.Source.Snapshot(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(cadvisorCPUUsage, err)
		return
	}
	machine := []string{"", c.MachineID, c.MachineID}
	ch <- prometheus.MustNewConstMetric(machineCores, prometheus.GaugeValue, snap.Node.Cores, machine...)
	ch <- prometheus.MustNewConstMetric(machineMemory, prometheus.GaugeValue, float64(snap.Node.MemoryBytes), machine...)
	for _, p := range snap.Pods {
		podCgroup := podCgroupPath(p)
		podLabels := []string{"", podCgroup, "", "", p.Namespace, p.Name}
		ch <- at(p.CPU.Time, prometheus.MustNewConstMetric(cadvisorCPUUsage, prometheus.CounterValue, coreSeconds(p.CPU), podLabels...))
		ch <- at(p.Memory.Time, prometheus.MustNewConstMetric(cadvisorWorkingSet, prometheus.GaugeValue, float64(p.Memory.WorkingSetBytes), podLabels...))
		ch <- at(p.Memory.Time, prometheus.MustNewConstMetric(cadvisorRSS, prometheus.GaugeValue, float64(p.Memory.RSSBytes), podLabels...))
		ch <- prometheus.MustNewConstMetric(cadvisorStartTime, prometheus.GaugeValue, unixSeconds(p.StartTime), podLabels...)
		for _, ctr := range p.Containers {
			c.collectContainer(ch, podCgroup, p, ctr)
		}
	}
}

func (c CadvisorCollector) collectContainer(ch chan<- prometheus.Metric, podCgroup string, p stats.PodUsage, ctr stats.ContainerUsage) {
	labels := []string{ctr.Name, podCgroup + "/" + ctr.ID, ctr.Image, ctr.ID, p.Namespace, p.Name}
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64) {
		ch <- at(ctr.CPU.Time, prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...))
	}
	counter(cadvisorCPUUsage, coreSeconds(ctr.CPU))
	if ctr.CPUQuota > 0 { // cAdvisor reports CFS counters only for a cgroup with a quota
		counter(cadvisorCFSPeriods, float64(ctr.Throttling.Periods))
		counter(cadvisorCFSThrottled, float64(ctr.Throttling.ThrottledPeriods))
		counter(cadvisorCFSThrottledSecs, ctr.Throttling.ThrottledSeconds)
		gauge(cadvisorCPUQuota, float64(ctr.CPUQuota))
	}
	gauge(cadvisorCPUPeriod, float64(max(ctr.CPUPeriod, 100_000)))
	gauge(cadvisorMemoryLimit, float64(ctr.MemoryLimitBytes))
	ch <- at(ctr.Memory.Time, prometheus.MustNewConstMetric(cadvisorWorkingSet, prometheus.GaugeValue, float64(ctr.Memory.WorkingSetBytes), labels...))
	ch <- at(ctr.Memory.Time, prometheus.MustNewConstMetric(cadvisorRSS, prometheus.GaugeValue, float64(ctr.Memory.RSSBytes), labels...))
	gauge(cadvisorStartTime, unixSeconds(ctr.StartTime))
}

// podCgroupPath is the pod's cgroup as the cgroupfs driver names it:
// /kubepods/pod<uid> for a Guaranteed pod, else below its QoS class.
func podCgroupPath(p stats.PodUsage) string {
	uid := "pod" + p.UID
	switch qos := strings.ToLower(p.QOSClass); qos {
	case "guaranteed":
		return "/kubepods/" + uid
	case "":
		return "/kubepods/besteffort/" + uid
	default:
		return "/kubepods/" + qos + "/" + uid
	}
}
