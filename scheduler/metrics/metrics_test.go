package metrics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/mkube/mkube/scheduler/metrics"
)

func TestSeriesCarryKubeSchedulerNamesAndLabels(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	m.Attempt("default-scheduler", metrics.Scheduled, 3*time.Millisecond)
	m.Attempt("default-scheduler", metrics.Unschedulable, time.Millisecond)
	m.PodScheduled(2)
	m.Preemption(1)
	m.ExtensionPoint("default-scheduler", "Filter", "Success", time.Millisecond)
	m.WatchPending(func() metrics.PendingCounts { return metrics.PendingCounts{Active: 2, Backoff: 1, Unschedulable: 3} })

	tests := []struct {
		family, want string
	}{
		{"scheduler_schedule_attempts_total", `
# HELP scheduler_schedule_attempts_total Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.
# TYPE scheduler_schedule_attempts_total counter
scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 1
scheduler_schedule_attempts_total{profile="default-scheduler",result="unschedulable"} 1
`},
		{"scheduler_preemption_attempts_total", `
# HELP scheduler_preemption_attempts_total Total preemption attempts in the cluster till now
# TYPE scheduler_preemption_attempts_total counter
scheduler_preemption_attempts_total 1
`},
	}
	if !strings.Contains(gathered(t, reg), `scheduler_framework_extension_point_duration_seconds_count{extension_point="Filter",profile="default-scheduler",status="Success"} 1`) {
		t.Error("no scheduler_framework_extension_point_duration_seconds{extension_point=Filter,status=Success}")
	}
	for _, tt := range tests {
		t.Run(tt.family, func(t *testing.T) {
			if err := testutil.GatherAndCompare(reg, strings.NewReader(tt.want), tt.family); err != nil {
				t.Error(err)
			}
		})
	}
	pending := map[string]float64{}
	families, _ := reg.Gather()
	for _, f := range families {
		switch f.GetName() {
		case "scheduler_pending_pods":
			for _, m := range f.Metric {
				pending[m.Label[0].GetValue()] = m.Gauge.GetValue()
			}
		case "scheduler_scheduling_attempt_duration_seconds", "scheduler_pod_scheduling_attempts":
			if len(f.Metric) == 0 || f.Metric[0].Histogram.GetSampleCount() == 0 {
				t.Errorf("%s: nothing observed", f.GetName())
			}
		}
	}
	for queue, want := range map[string]float64{"active": 2, "backoff": 1, "unschedulable": 3, "gated": 0} {
		if got, ok := pending[queue]; !ok || got != want {
			t.Errorf("scheduler_pending_pods{queue=%q} = %v (present %v), want %v", queue, got, ok, want)
		}
	}
}

// gathered is the registry in the text format.
func gathered(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range families {
		if _, err := expfmt.MetricFamilyToText(&b, f); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func TestNilMetricsRecordNothing(t *testing.T) {
	var m *metrics.Metrics
	m.Attempt("p", metrics.Error, time.Second)
	m.PodScheduled(1)
	m.Preemption(0)
	m.ExtensionPoint("p", "Bind", "Error", time.Second)
	m.WatchPending(nil)
}
