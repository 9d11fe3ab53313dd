// Package metricsserver is mkube's metrics server: the program of
// registry.k8s.io/metrics-server/metrics-server (sigs.k8s.io/metrics-server
// v0.8.0), written anew. It plays Heapster's role in seed 003 §十三: it
// collects every kubelet's resource usage and serves it as
// metrics.k8s.io/v1beta1 (NodeMetrics, PodMetrics) behind an APIService,
// which `kubectl top` and the HPA controller read. It runs on the host as
// bin/metrics-server (cmd/metrics-server) and in the cluster as the
// catalog's image (images/catalog/metricsserver.go), deployed by
// addons/metrics-server.yaml as the real one is.
//
// As the real one, it:
//
//   - lists and watches the nodes and pods (the pods give PodMetrics
//     their labels and let label selectors work);
//   - every --metric-resolution scrapes each node's kubelet, all at once,
//     at the first address of --kubelet-preferred-address-types and the
//     port of the node's status (--kubelet-use-node-status-port) or
//     --kubelet-port, GET /metrics/resource (or the path of the node's
//     annotation metrics.k8s.io/resource-metrics-path), with its service
//     account's credentials; --kubelet-insecure-tls skips checking the
//     kubelet's certificate (mkube's kubelets sign their own, as real
//     ones do by default);
//   - parses the Prometheus text (node_cpu_usage_seconds_total,
//     node_memory_working_set_bytes, container_cpu_usage_seconds_total,
//     container_memory_working_set_bytes, container_start_time_seconds),
//     dropping a node whose cumulative CPU or memory reads 0 and a pod
//     any of whose containers does;
//   - keeps the last two points of each node and container and serves CPU
//     as the rate between them, memory as the last working set: a pod has
//     no metrics before its second scrape, unless its container started
//     10 s to one resolution before the first, whose start time then
//     stands in as the first point;
//   - serves GET and LIST of nodes and pods (namespaced) of
//     metrics.k8s.io/v1beta1 with labelSelector and fieldSelector
//     (metadata.name, metadata.namespace), discovery, /healthz, /livez and
//     /readyz (ready once a scrape has been stored), over HTTPS on
//     --secure-port, authenticating and authorizing as an aggregated API
//     server: the aggregator's front-proxy certificate and X-Remote-User
//     headers, client certificates, TokenReview, SubjectAccessReview;
//   - serves /metrics of its own (Prometheus text, behind the same
//     authorization, as a non-resource path): metrics-server's
//     metrics_server_kubelet_request_duration_seconds{node},
//     metrics_server_kubelet_request_total{success},
//     metrics_server_kubelet_last_request_time_seconds{node},
//     metrics_server_manager_tick_duration_seconds (buckets around the
//     resolution), metrics_server_storage_points{type}, go_* and
//     process_*;
//   - with -v 6 or more, logs each scrape round: its nodes, the nodes
//     and pods it got metrics of, and how long it took.
//
// It answers kubectl get's Table too (name, cpu, memory, window; a pod's
// containers summed). Not simulated: watch, protobuf, the swap series,
// in /metrics the API server library's series (apiserver_*) and
// metrics_server_api_metric_freshness_seconds, --node-selector, and
// writing a self-signed pair to --cert-dir (it is kept in memory).
//
// Where things live:
//
//	file         what it holds
//	options.go   Options: metrics-server's flags and their defaults; ParseFlags
//	decode.go    MetricsPoint, MetricsBatch: /metrics/resource's text into points, zeros dropped
//	scraper.go   the kubelets' URLs (address types, status port, annotation) and the concurrent scrape
//	storage.go   the last two points per node and container; usage as the rate between them
//	kubelets.go  KubeletClient (credentials and TLS for the kubelets) and ServingCert
//	auth.go      delegated authentication (front proxy, client certificates, TokenReview) and authorization (SubjectAccessReview), asked through internal/delegatedauth
//	api.go       requestInfo, discovery, the nodes' and pods' get and list with selectors, API errors
//	table.go     the Table of nodes' and pods' usage, for a client that asks for one
//	server.go    Config, Server: New, Start, Run, ScrapeOnce; Handler and TLSHandler; routing and health
//	metrics.go   the server's own /metrics: metrics-server's series, in a registry of its own
//	doc.go       this map
package metricsserver
