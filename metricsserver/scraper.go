package metricsserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// ResourceMetricsPathAnnotation lets a node name another path for its
// resource metrics (metrics-server 0.7+; KWOK's nodes use it).
const ResourceMetricsPathAnnotation = "metrics.k8s.io/resource-metrics-path"

// defaultResourceMetricsPath is the kubelet's endpoint metrics-server scrapes.
const defaultResourceMetricsPath = "/metrics/resource"

// scraper reads every node's kubelet, as metrics-server's scraper does:
// all nodes at once, each with its own timeout.
type scraper struct {
	opts   Options
	client *http.Client // the kubelets' client: the server's credentials, its TLS settings
	now    func() time.Time
	// metrics count each request (metrics.go).
	metrics *serverMetrics

	mu sync.Mutex
}

// kubeletURL is where node's resource metrics are: the first address of
// the preferred types, the node's status port or --kubelet-port, and the
// annotation's path if it has one.
func (s *scraper) kubeletURL(node *corev1.Node) (string, error) {
	port := s.opts.KubeletPort
	if s.opts.KubeletUseNodeStatusPort && node.Status.DaemonEndpoints.KubeletEndpoint.Port != 0 {
		port = int(node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	}
	path := defaultResourceMetricsPath
	if p := node.Annotations[ResourceMetricsPathAnnotation]; p != "" {
		path = p
	}
	for _, typ := range s.opts.KubeletPreferredAddressTypes {
		for _, a := range node.Status.Addresses {
			if a.Type == typ && a.Address != "" {
				return "https://" + net.JoinHostPort(a.Address, strconv.Itoa(port)) + path, nil
			}
		}
	}
	return "", fmt.Errorf("node %s has no valid hostname and/or IP address: %v", node.Name, node.Status.Addresses)
}

// scrapeAll scrapes nodes concurrently and merges what they answered;
// a node that fails is logged and left out of this round.
func (s *scraper) scrapeAll(ctx context.Context, nodes []*corev1.Node, logf func(msg string, kv ...any)) *MetricsBatch {
	results := make(chan *MetricsBatch, len(nodes))
	for _, node := range nodes {
		go func() {
			batch, err := s.scrape(ctx, node)
			if err != nil {
				logf("Failed to scrape node", "err", err, "node", node.Name)
			}
			results <- batch
		}()
	}
	all := &MetricsBatch{Nodes: map[string]MetricsPoint{}, Pods: map[PodRef]PodPoints{}}
	for range nodes {
		batch := <-results
		if batch == nil {
			continue
		}
		for name, p := range batch.Nodes {
			all.Nodes[name] = p
		}
		for ref, p := range batch.Pods {
			all.Pods[ref] = p
		}
	}
	return all
}

// scrape reads one kubelet, over HTTPS, as a kubelet's port is.
func (s *scraper) scrape(ctx context.Context, node *corev1.Node) (batch *MetricsBatch, err error) {
	start := s.now()
	defer func() { s.metrics.observeRequest(node.Name, start, s.now(), err) }()
	url, err := s.kubeletURL(node)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.KubeletRequestTimeout)
	defer cancel()
	return s.get(ctx, node.Name, url)
}

func (s *scraper) get(ctx context.Context, node, url string) (*MetricsBatch, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "metrics-server/v0.8.0 (mkube)")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("unable to fetch metrics from node %s: %w", node, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("request failed, status: %q, body: %q", resp.Status, body)
	}
	batch, err := decodeBatch(node, resp.Body, s.now())
	if err != nil {
		return nil, errors.Join(fmt.Errorf("failed to decode metrics of node %s", node), err)
	}
	return batch, nil
}
