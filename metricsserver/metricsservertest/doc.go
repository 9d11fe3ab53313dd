// Package metricsservertest starts, inside a test, what `kubectl top`
// talks to: mkube's API server (internal/testserver) with nodes whose
// kubelets are fakes (internal/fakekubelet) and the metrics server
// (package metricsserver) behind its Service and APIService, as
// addons/metrics-server.yaml would deploy it; the aggregator reaches the
// metrics server through the fake kubelet of its pod's node. The
// metrics server's clock is the test's and it scrapes when the test says
// (Metrics.ScrapeOnce).
//
//	file        what it holds
//	cluster.go  Cluster: StartCluster, Create, WaitForPods
//	doc.go      this map
package metricsservertest
