// Package metrics is how the HPA controller reads the numbers it scales
// on, as upstream's pkg/controller/podautoscaler/metrics does: the pods'
// CPU and memory from metrics.k8s.io (the PodMetrics a metrics server
// serves, seed 003 三.4 and 十三), per-pod and per-object custom metrics
// from custom.metrics.k8s.io, and external metrics from
// external.metrics.k8s.io. All three are read through the API server,
// whose aggregator proxies them to their APIServices; an API nobody
// serves is an error the controller reports in the HPA's conditions.
//
// Where things live:
//
//	file            what it holds (upstream file)
//	interfaces.go   PodMetric, PodMetricsInfo and the Client interface (interfaces.go)
//	rest.go         REST, the Client over the API server (client.go)
//	utilization.go  the usage ratios: of requests, and of a target value (utilization.go)
package metrics
