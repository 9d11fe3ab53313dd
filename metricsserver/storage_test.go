package metricsserver

import (
	"testing"
	"time"
)

var t0 = time.Unix(1_700_000_000, 0)

func point(at time.Duration, cpuSeconds float64, memory uint64) MetricsPoint {
	return MetricsPoint{Timestamp: t0.Add(at), CumulativeCPUUsed: uint64(cpuSeconds * 1e9), MemoryUsage: memory}
}

func TestNodeUsageIsTheRateBetweenTwoScrapes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		scrapes    []MetricsPoint
		wantMilli  int64 // -1: no metrics
		wantMemory string
		wantWindow time.Duration
	}{
		{name: "one scrape: no rate yet", scrapes: []MetricsPoint{point(0, 10, 1<<20)}, wantMilli: -1},
		{name: "half a core over 15 s", scrapes: []MetricsPoint{point(0, 10, 1<<20), point(15*time.Second, 17.5, 2<<20)},
			wantMilli: 500, wantMemory: "2Mi", wantWindow: 15 * time.Second},
		{name: "a repeated reading keeps the pair", scrapes: []MetricsPoint{point(0, 10, 1<<20), point(15*time.Second, 25, 1<<20), point(15*time.Second, 25, 1<<20)},
			wantMilli: 1000, wantMemory: "1Mi", wantWindow: 15 * time.Second},
		{name: "a counter that went down has no rate", scrapes: []MetricsPoint{point(0, 10, 1<<20), point(15*time.Second, 5, 1<<20)}, wantMilli: -1},
		{name: "idle", scrapes: []MetricsPoint{point(0, 10, 1<<20), point(10*time.Second, 10, 1<<20)},
			wantMilli: 0, wantMemory: "1Mi", wantWindow: 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStorage(15 * time.Second)
			for _, p := range tc.scrapes {
				s.Store(&MetricsBatch{Nodes: map[string]MetricsPoint{"n": p}})
			}
			u, ok := s.NodeUsage("n")
			if tc.wantMilli < 0 {
				if ok {
					t.Fatalf("usage %v, want none", u)
				}
				return
			}
			if !ok {
				t.Fatal("no usage")
			}
			cpu, mem := u.Resources["cpu"], u.Resources["memory"]
			if cpu.MilliValue() != tc.wantMilli || mem.String() != tc.wantMemory || u.Window != tc.wantWindow {
				t.Errorf("cpu %dm memory %s window %s, want %dm %s %s", cpu.MilliValue(), mem.String(), u.Window, tc.wantMilli, tc.wantMemory, tc.wantWindow)
			}
		})
	}
}

func TestANewContainerUsesItsStartTimeAsItsFirstPoint(t *testing.T) {
	for _, tc := range []struct {
		name    string
		age     time.Duration // from start to the first scrape
		metrics bool
	}{
		{"started 5 s ago: too young", 5 * time.Second, false},
		{"started 12 s ago", 12 * time.Second, true},
		{"started one resolution ago", 15 * time.Second, true},
		{"started long ago: waits for a second scrape", time.Minute, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStorage(15 * time.Second)
			p := point(tc.age, 3, 1<<20)
			p.StartTime = t0
			ref := PodRef{"default", "web"}
			s.Store(&MetricsBatch{Pods: map[PodRef]PodPoints{ref: {"app": p}}})
			u, ok := s.PodUsage(ref)
			if ok != tc.metrics {
				t.Fatalf("metrics after one scrape: %v, want %v", ok, tc.metrics)
			}
			if ok {
				cpu := u["app"].Resources["cpu"]
				if want := int64(3e9 / tc.age.Seconds()); cpu.ScaledValue(-9) != want || u["app"].Window != tc.age {
					t.Errorf("cpu %d nanocores over %s, want %d over %s", cpu.ScaledValue(-9), u["app"].Window, want, tc.age)
				}
			}
		})
	}
}

func TestAPodHasMetricsOnlyWhenEveryContainerHas(t *testing.T) {
	s := newStorage(15 * time.Second)
	ref := PodRef{"default", "web"}
	s.Store(&MetricsBatch{Pods: map[PodRef]PodPoints{ref: {"app": point(0, 1, 1)}}})
	s.Store(&MetricsBatch{Pods: map[PodRef]PodPoints{ref: {"app": point(15*time.Second, 2, 1), "sidecar": point(15*time.Second, 1, 1)}}})
	if _, ok := s.PodUsage(ref); ok {
		t.Error("a pod whose sidecar has one point has metrics")
	}
	s.Store(&MetricsBatch{Pods: map[PodRef]PodPoints{ref: {"app": point(30*time.Second, 3, 1), "sidecar": point(30*time.Second, 2, 1)}}})
	if u, ok := s.PodUsage(ref); !ok || len(u) != 2 {
		t.Errorf("usage %v, %v; want both containers", u, ok)
	}
	s.Store(&MetricsBatch{})
	if _, ok := s.PodUsage(ref); ok {
		t.Error("a pod gone from the kubelet keeps its metrics")
	}
}
