// Package stats is the kubelet's view of what its containers use
// (pkg/kubelet/stats, cri_stats_provider.go, and the Summary API of
// pkg/kubelet/server/stats, summary.go): one Provider per node reads the
// CRI (ListPodSandbox, ListContainers, ListContainerStats and, where the
// runtime has it, ListPodSandboxStats) into a Snapshot, and GET
// /stats/summary renders it as k8s.io/kubelet's stats/v1alpha1 Summary.
// Package kubelet/metrics renders the same snapshot as /metrics/resource
// and /metrics/cadvisor. It serves no step of seed 000: it watches the
// pods that steps 12 and 13 started (seed 003 §十三, cAdvisor in the
// kubelet).
//
// The CRI gives cumulative CPU: the rate (usageNanoCores) is computed
// between the provider's own samples, as upstream does. The node's totals
// are its pods' sums plus a small system share (10m of CPU, 64 MiB), so an
// idle node never reads 0; its cores and memory are its capacity.
//
// Where things live:
//
//	file          what it holds
//	snapshot.go   Snapshot: a node's, its pods' and containers' usage at one moment
//	provider.go   the Provider and its Runtime (the CRI calls it makes): Snapshot
//	build.go      one round of CRI answers turned into pods, containers and node totals
//	rates.go      the previous samples: CPU rates and the throttling estimated between them
//	summary.go    the Summary API: Summary and GET /stats/summary
//	doc.go        this map
package stats
