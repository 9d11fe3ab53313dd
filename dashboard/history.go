package dashboard

import (
	"context"
	"log/slog"
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
)

// Retention is how long the numbers view remembers: the last hour, as
// the seed's §十三 Grafana board shows by default. At one sample every
// SampleInterval that is 240 points a series.
const Retention = time.Hour

// SampleInterval is metrics-server's own resolution (its --metric-resolution
// default, 15s): sampling faster would only repeat its numbers.
const SampleInterval = 15 * time.Second

// Point is one sample.
type Point struct {
	T time.Time `json:"t"`
	V float64   `json:"v"`
}

// Sample is one round of samples, by series name: "node/node01/cpu"
// (millicores), "node/node01/memory" (MiB), "pod/default/web-1/cpu",
// "hpa/default/web/replicas" and ".../desired", ".../target"
// (the metric's target, a percentage), "cluster/pending" (pods Pending).
type Sample struct {
	T      time.Time          `json:"t"`
	Values map[string]float64 `json:"values"`
	// Errors are what could not be read this round, such as the metrics
	// API when metrics-server is not installed, in the API's words.
	Errors []string `json:"errors,omitempty"`
}

// History samples the metrics API and the informers' caches every
// SampleInterval and keeps the last Retention of samples in memory.
type History struct {
	client  *client.Client
	watcher *Watcher
	hub     *Broadcast[Sample]
	clock   clock.WithTicker
	log     *slog.Logger

	mu      sync.Mutex
	samples []Sample // oldest first, none older than Retention
}

// NewHistory returns an empty history; Run fills it.
func NewHistory(c *client.Client, w *Watcher, clk clock.WithTicker, log *slog.Logger) *History {
	return &History{client: c, watcher: w, hub: NewBroadcast[Sample](log, "samples"), clock: clk, log: log}
}

// Run samples until ctx ends. It blocks.
func (h *History) Run(ctx context.Context) {
	t := h.clock.NewTicker(SampleInterval)
	defer t.Stop()
	for {
		h.add(h.sample(ctx))
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// Samples is a copy of the history.
func (h *History) Samples() []Sample {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Sample(nil), h.samples...)
}

// Subscribe and Unsubscribe give the SSE handler each new sample.
func (h *History) Subscribe() chan Sample    { return h.hub.Subscribe() }
func (h *History) Unsubscribe(c chan Sample) { h.hub.Unsubscribe(c) }

func (h *History) add(s Sample) {
	h.mu.Lock()
	h.samples = append(h.samples, s)
	cut := 0
	for cut < len(h.samples) && s.T.Sub(h.samples[cut].T) > Retention {
		cut++
	}
	h.samples = h.samples[cut:]
	h.mu.Unlock()
	h.hub.Publish(s)
}

// metricsList is the part of metrics.k8s.io/v1beta1's NodeMetricsList and
// PodMetricsList the charts use.
type metricsList struct {
	Items []struct {
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		Usage      corev1.ResourceList `json:"usage"` // nodes
		Containers []struct {
			Usage corev1.ResourceList `json:"usage"`
		} `json:"containers"` // pods
	} `json:"items"`
}

func (h *History) sample(ctx context.Context) Sample {
	s := Sample{T: h.clock.Now(), Values: map[string]float64{}}
	ctx, cancel := context.WithTimeout(ctx, SampleInterval)
	defer cancel()
	var nodes, pods metricsList
	if err := h.client.Do(ctx, "GET", "/apis/metrics.k8s.io/v1beta1/nodes", nil, &nodes); err != nil {
		s.Errors = append(s.Errors, "node metrics: "+err.Error())
	}
	for _, n := range nodes.Items {
		putUsage(s.Values, "node/"+n.Metadata.Name, n.Usage)
	}
	if err := h.client.Do(ctx, "GET", "/apis/metrics.k8s.io/v1beta1/pods", nil, &pods); err != nil {
		s.Errors = append(s.Errors, "pod metrics: "+err.Error())
	}
	for _, p := range pods.Items {
		sum := corev1.ResourceList{}
		for _, c := range p.Containers {
			for k, q := range c.Usage {
				acc := sum[k]
				acc.Add(q)
				sum[k] = acc
			}
		}
		putUsage(s.Values, "pod/"+p.Metadata.Namespace+"/"+p.Metadata.Name, sum)
	}
	pending := 0
	for _, obj := range h.watcher.Cache(client.Pods).List() {
		if obj.(*corev1.Pod).Status.Phase == corev1.PodPending {
			pending++
		}
	}
	s.Values["cluster/pending"] = float64(pending)
	for _, obj := range h.watcher.Cache(HorizontalPodAutoscalers).List() {
		hpa := obj.(*autoscalingv2.HorizontalPodAutoscaler)
		key := "hpa/" + hpa.Namespace + "/" + hpa.Name
		s.Values[key+"/replicas"] = float64(hpa.Status.CurrentReplicas)
		s.Values[key+"/desired"] = float64(hpa.Status.DesiredReplicas)
		for _, m := range hpa.Status.CurrentMetrics {
			if m.Resource != nil && m.Resource.Current.AverageUtilization != nil {
				s.Values[key+"/"+string(m.Resource.Name)+"%"] = float64(*m.Resource.Current.AverageUtilization)
			}
		}
		for _, m := range hpa.Spec.Metrics {
			if m.Resource != nil && m.Resource.Target.AverageUtilization != nil {
				s.Values[key+"/"+string(m.Resource.Name)+"%target"] = float64(*m.Resource.Target.AverageUtilization)
			}
		}
	}
	h.log.Debug("sampled", "series", len(s.Values), "errors", len(s.Errors))
	return s
}

// putUsage stores CPU in millicores and memory in MiB.
func putUsage(v map[string]float64, prefix string, usage corev1.ResourceList) {
	if q, ok := usage[corev1.ResourceCPU]; ok {
		v[prefix+"/cpu"] = float64(q.MilliValue())
	}
	if q, ok := usage[corev1.ResourceMemory]; ok {
		v[prefix+"/memory"] = float64(q.Value()) / float64(1<<20)
	}
}
