package workqueue_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/client/workqueue"
)

// value is the one series of family name labelled name=queue: a counter's
// or gauge's value, a histogram's sample count.
func value(t *testing.T, reg *prometheus.Registry, family, queue string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.Metric {
			if m.Label[0].GetName() != "name" || m.Label[0].GetValue() != queue {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	t.Fatalf("no %s{name=%q}", family, queue)
	return 0
}

func TestNamedQueueRecordsClientGoSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	q := workqueue.NewNamed[string](clk, "replicaset", workqueue.NewMetricsProvider(reg))

	q.Add("a")
	q.Add("b")
	q.Add("a") // already waiting: not an add
	clk.Step(2 * time.Second)
	item, _ := q.Get()
	clk.Step(3 * time.Second) // a has been processed for 3s

	tests := []struct {
		family string
		want   float64
	}{
		{"workqueue_adds_total", 2},
		{"workqueue_depth", 1},
		{"workqueue_queue_duration_seconds", 1}, // a's wait
		{"workqueue_work_duration_seconds", 0},  // a is not done
		{"workqueue_unfinished_work_seconds", 3},
		{"workqueue_longest_running_processor_seconds", 3},
		{"workqueue_retries_total", 0},
	}
	for _, tt := range tests {
		if got := value(t, reg, tt.family, "replicaset"); got != tt.want {
			t.Errorf("%s = %v, want %v", tt.family, got, tt.want)
		}
	}

	q.Done(item)
	q.AddRateLimited("b")
	for _, tt := range []struct {
		family string
		want   float64
	}{
		{"workqueue_work_duration_seconds", 1},
		{"workqueue_unfinished_work_seconds", 0},
		{"workqueue_retries_total", 1},
	} {
		if got := value(t, reg, tt.family, "replicaset"); got != tt.want {
			t.Errorf("after Done: %s = %v, want %v", tt.family, got, tt.want)
		}
	}
}

func TestQueuesOfOneNameMakeOneSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	p := workqueue.NewMetricsProvider(reg)
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	workqueue.NewNamed[string](clk, "job", p)
	workqueue.NewNamed[string](clk, "job", p)
	if _, err := reg.Gather(); err != nil {
		t.Fatalf("gather: %v", err)
	}
}
