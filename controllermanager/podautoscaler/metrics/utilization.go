package metrics

import "fmt"

// GetResourceUtilizationRatio is the pods' usage as a share of their
// requests, against targetUtilization (a percentage): the ratio, the
// utilization itself in percent, and the raw average usage per pod. Only
// pods with both a sample and a request count.
func GetResourceUtilizationRatio(metrics PodMetricsInfo, requests map[string]int64, targetUtilization int32) (ratio float64, utilization int32, rawAverage int64, err error) {
	var metricsTotal, requestsTotal int64
	entries := 0
	for pod, m := range metrics {
		request, ok := requests[pod]
		if !ok {
			continue
		}
		metricsTotal += m.Value
		requestsTotal += request
		entries++
	}
	// A pod whose containers request 0 says nothing about utilization.
	if requestsTotal == 0 {
		return 0, 0, 0, fmt.Errorf("no metrics returned matched known pods")
	}
	utilization = int32(metricsTotal * 100 / requestsTotal)
	return float64(utilization) / float64(targetUtilization), utilization, metricsTotal / int64(entries), nil
}

// GetMetricUsageRatio is the pods' average value against targetUsage:
// the ratio and the average.
func GetMetricUsageRatio(metrics PodMetricsInfo, targetUsage int64) (ratio float64, average int64) {
	var total int64
	for _, m := range metrics {
		total += m.Value
	}
	average = total / int64(len(metrics))
	return float64(average) / float64(targetUsage), average
}
