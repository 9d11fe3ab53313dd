// Package metrics is the kubelet's Prometheus endpoints
// (pkg/kubelet/metrics, metrics.go and collectors/, with cAdvisor's
// series and the prober's metrics): for each node, /metrics/resource (what
// metrics-server scrapes), /metrics/cadvisor (the container_* series),
// /metrics/probes and /metrics (the kubelet's own, with Go's and the
// process's), and /stats/summary from package kubelet/stats. It serves
// no step of seed 000: it makes steps 12 and 13 watchable (seed 003
// §十三, cAdvisor in the kubelet; §三.4, the numbers the HPA reads).
//
// Every path of every node has its own registry: a process running many
// nodes (`kubelet --nodes N`) never mixes their series. What is the
// process's, not a node's (go_*, process_*, the CRI calls), is one
// collector that every node's /metrics shows. The per-container
// series are custom Collectors that read the node's CRI snapshot at each
// scrape, stamped with the runtime's time as the kubelet writes them.
//
// Where things live:
//
//	file            what it holds
//	endpoints.go    Endpoints: one node's paths, each from its own registry
//	resource.go     ResourceCollector, /metrics/resource
//	cadvisor.go     CadvisorCollector, /metrics/cadvisor
//	probes.go       Probes, /metrics/probes, and the prober.Runner that counts runs
//	kubelet.go      Kubelet, the node's own /metrics: pod start SLI, pod workers, running pods and containers
//	runtimeops.go   RuntimeOperations: the CRI calls, counted by a gRPC interceptor
//	doc.go          this map
package metrics
