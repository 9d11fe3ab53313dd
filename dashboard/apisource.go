package dashboard

import (
	"context"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/client"
)

// apiSource samples what the API server knows: the metrics API (node and
// pod CPU and memory, as `kubectl top`), the HPAs' status from the
// dashboard's cache, and the pods Pending in it.
type apiSource struct {
	client  *client.Client
	watcher *Watcher
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

func (a apiSource) Sample(ctx context.Context, s *Sample) {
	var nodes, pods metricsList
	if err := a.client.Do(ctx, "GET", "/apis/metrics.k8s.io/v1beta1/nodes", nil, &nodes); err != nil {
		s.Errors = append(s.Errors, "node metrics: "+err.Error())
	}
	for _, n := range nodes.Items {
		putUsage(s.Values, "node/"+n.Metadata.Name, n.Usage)
	}
	if err := a.client.Do(ctx, "GET", "/apis/metrics.k8s.io/v1beta1/pods", nil, &pods); err != nil {
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
	for _, obj := range a.watcher.Cache(client.Pods).List() {
		if obj.(*corev1.Pod).Status.Phase == corev1.PodPending {
			pending++
		}
	}
	s.Values["cluster/pending"] = float64(pending)
	for _, obj := range a.watcher.Cache(HorizontalPodAutoscalers).List() {
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
