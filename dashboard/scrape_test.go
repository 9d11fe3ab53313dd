package dashboard

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// target is a fake component's /metrics: whatever exposition (or error)
// the test sets for the next scrape.
type target struct {
	mu     sync.Mutex
	status int
	body   string
}

func (f *target) set(status int, body string) {
	f.mu.Lock()
	f.status, f.body = status, body
	f.mu.Unlock()
}

func (f *target) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	w.WriteHeader(f.status)
	io.WriteString(w, f.body)
}

// schedulerMetrics is a scheduler's exposition, as its registry writes
// it: two profiles, so that attempts are summed by result.
func schedulerMetrics(active, backoff, scheduledA, scheduledB, unschedulable int) string {
	s := `# HELP scheduler_pending_pods Number of pending pods, by the queue type.
# TYPE scheduler_pending_pods gauge
scheduler_pending_pods{queue="active"} ` + itoa(active) + `
scheduler_pending_pods{queue="backoff"} ` + itoa(backoff) + `
scheduler_pending_pods{queue="gated"} 0
scheduler_pending_pods{queue="unschedulable"} 0
# HELP scheduler_schedule_attempts_total Number of attempts to schedule pods, by the result.
# TYPE scheduler_schedule_attempts_total counter
scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} ` + itoa(scheduledA) + `
scheduler_schedule_attempts_total{profile="other-scheduler",result="scheduled"} ` + itoa(scheduledB) + `
`
	if unschedulable > 0 {
		s += `scheduler_schedule_attempts_total{profile="default-scheduler",result="unschedulable"} ` + itoa(unschedulable) + "\n"
	}
	return s + "# HELP go_goroutines Number of goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines 42\n"
}

func controllerManagerMetrics(deploymentDepth, deploymentAdds, replicasetAdds int) string {
	return `# HELP workqueue_depth Current depth of workqueue
# TYPE workqueue_depth gauge
workqueue_depth{name="deployment"} ` + itoa(deploymentDepth) + `
workqueue_depth{name="job"} 7
workqueue_depth{name="replicaset"} 0
# HELP workqueue_adds_total Total number of adds handled by workqueue
# TYPE workqueue_adds_total counter
workqueue_adds_total{name="deployment"} ` + itoa(deploymentAdds) + `
workqueue_adds_total{name="job"} 99
workqueue_adds_total{name="replicaset"} ` + itoa(replicasetAdds) + `
`
}

func itoa(n int) string { return strconv.Itoa(n) }

// Every round the history scrapes both components' /metrics, parses the
// exposition, and keeps the charted series: gauges as they are, counters
// as their rate since the round before, on the injected clock.
func TestHistoryScrapesTheComponentsMetricsEveryRound(t *testing.T) {
	sched, cm := &target{}, &target{}
	schedSrv, cmSrv := httptest.NewServer(sched), httptest.NewServer(cm)
	defer schedSrv.Close()
	defer cmSrv.Close()
	const interval = 15 * time.Second
	clk := clocktesting.NewFakeClock(t0)
	log := slog.New(slog.DiscardHandler)
	h := NewHistory(clk, interval, log,
		NewSchedulerScraper(schedSrv.URL+"/metrics", schedSrv.Client(), false),
		NewControllerManagerScraper(cmSrv.URL+"/metrics", cmSrv.Client(), false))
	samples := h.Subscribe()
	defer h.Unsubscribe(samples)

	rounds := []struct {
		name     string
		sched    func()
		cm       func()
		want     map[string]float64
		schedErr string // a substring of the scheduler's ScrapeStatus.Error
	}{
		{
			name:  "the first round has the gauges, and no rate yet: a rate needs two scrapes",
			sched: func() { sched.set(200, schedulerMetrics(2, 1, 4, 1, 0)) },
			cm:    func() { cm.set(200, controllerManagerMetrics(1, 3, 10)) },
			want: map[string]float64{"scheduler/pending/active": 2, "scheduler/pending/backoff": 1, "scheduler/pending/gated": 0, "scheduler/pending/unschedulable": 0,
				"controller-manager/workqueue/deployment/depth": 1, "controller-manager/workqueue/replicaset/depth": 0},
		},
		{
			name:  "15 s later: attempts per second summed over profiles, a result that appeared counted from 0, adds per second of the charted queues only",
			sched: func() { sched.set(200, schedulerMetrics(0, 0, 30, 5, 3)) },
			cm:    func() { cm.set(200, controllerManagerMetrics(0, 6, 40)) },
			want: map[string]float64{"scheduler/pending/active": 0, "scheduler/pending/backoff": 0, "scheduler/pending/gated": 0, "scheduler/pending/unschedulable": 0,
				"scheduler/attempts/scheduled": 2, "scheduler/attempts/unschedulable": 0.2,
				"controller-manager/workqueue/deployment/depth": 0, "controller-manager/workqueue/replicaset/depth": 0,
				"controller-manager/workqueue/deployment/adds": 0.2, "controller-manager/workqueue/replicaset/adds": 2},
		},
		{
			name:     "a scheduler that answers 403 gives no values and says why, in its words; the other component is still read",
			sched:    func() { sched.set(403, "Forbidden (user=mkube:dashboard, verb=get, resource=, subresource=)\n") },
			cm:       func() { cm.set(200, controllerManagerMetrics(0, 6, 40)) },
			schedErr: "403 Forbidden: Forbidden (user=mkube:dashboard, verb=get",
			want: map[string]float64{"controller-manager/workqueue/deployment/depth": 0, "controller-manager/workqueue/replicaset/depth": 0,
				"controller-manager/workqueue/deployment/adds": 0, "controller-manager/workqueue/replicaset/adds": 0},
		},
		{
			name:  "after a failed scrape, no rate until two scrapes in a row again",
			sched: func() { sched.set(200, schedulerMetrics(0, 0, 60, 5, 3)) },
			cm:    func() { cm.set(200, controllerManagerMetrics(0, 6, 40)) },
			want: map[string]float64{"scheduler/pending/active": 0, "scheduler/pending/backoff": 0, "scheduler/pending/gated": 0, "scheduler/pending/unschedulable": 0,
				"controller-manager/workqueue/deployment/depth": 0, "controller-manager/workqueue/replicaset/depth": 0,
				"controller-manager/workqueue/deployment/adds": 0, "controller-manager/workqueue/replicaset/adds": 0},
		},
		{
			name:  "a scheduler that restarted (its counters fell) counted its new values from 0",
			sched: func() { sched.set(200, schedulerMetrics(1, 0, 3, 0, 0)) },
			cm:    func() { cm.set(200, controllerManagerMetrics(0, 6, 40)) },
			want: map[string]float64{"scheduler/pending/active": 1, "scheduler/pending/backoff": 0, "scheduler/pending/gated": 0, "scheduler/pending/unschedulable": 0,
				"scheduler/attempts/scheduled":                  0.2,
				"controller-manager/workqueue/deployment/depth": 0, "controller-manager/workqueue/replicaset/depth": 0,
				"controller-manager/workqueue/deployment/adds": 0, "controller-manager/workqueue/replicaset/adds": 0},
		},
		{
			name:     "a body that is not the exposition format is a parse error",
			sched:    func() { sched.set(200, "<html>not metrics</html>\n") },
			cm:       func() { cm.set(200, controllerManagerMetrics(0, 6, 40)) },
			schedErr: "parse:",
			want: map[string]float64{"controller-manager/workqueue/deployment/depth": 0, "controller-manager/workqueue/replicaset/depth": 0,
				"controller-manager/workqueue/deployment/adds": 0, "controller-manager/workqueue/replicaset/adds": 0},
		},
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i, r := range rounds {
		r.sched()
		r.cm()
		if i == 0 {
			go h.Run(ctx) // samples at once, then at each tick
		} else {
			clk.Step(interval)
		}
		var s Sample
		select {
		case s = <-samples:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d (%s): no sample in 10s", i, r.name)
		}
		if want := t0.Add(time.Duration(i) * interval); !s.T.Equal(want) {
			t.Errorf("round %d (%s): sample at %s, want the injected clock's %s", i, r.name, s.T, want)
		}
		if len(s.Values) != len(r.want) {
			t.Errorf("round %d (%s): values %v, want %v", i, r.name, s.Values, r.want)
		}
		for k, v := range r.want {
			if got, ok := s.Values[k]; !ok || got != v {
				t.Errorf("round %d (%s): %s = %v (present %v), want %v", i, r.name, k, got, ok, v)
			}
		}
		if st := s.Scrapes[SchedulerComponent]; st.URL != schedSrv.URL+"/metrics" || (r.schedErr == "") != (st.Error == "") || !strings.Contains(st.Error, r.schedErr) {
			t.Errorf("round %d (%s): the scheduler's scrape %+v, want the error %q", i, r.name, st, r.schedErr)
		}
		if st := s.Scrapes[ControllerManagerComponent]; st.Error != "" {
			t.Errorf("round %d (%s): the controller manager's scrape failed: %s", i, r.name, st.Error)
		}
	}
	if got := len(h.Samples()); got != len(rounds) {
		t.Errorf("the history keeps %d samples, want %d", got, len(rounds))
	}
}

// A component whose flag was not given is sampled as "not configured":
// no values, no error, an empty URL. An anonymous dashboard (the plain
// port: no credentials) is told why the component refuses it.
func TestScraperNotConfiguredOrAnonymous(t *testing.T) {
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
	}))
	defer refusing.Close()
	tests := []struct {
		name    string
		scraper *Scraper
		wantErr string
	}{
		{"a scraper with no URL says nothing but that it is not configured", NewSchedulerScraper("", nil, true), ""},
		{"a dashboard with no credentials is told to run with --kubeconfig", NewSchedulerScraper(refusing.URL+"/metrics", refusing.Client(), true),
			"401 Unauthorized: Unauthorized (the dashboard has no credentials to show it: run it with --kubeconfig)"},
		{"a dashboard with credentials the component refuses gets its answer alone", NewSchedulerScraper(refusing.URL+"/metrics", refusing.Client(), false),
			"401 Unauthorized: Unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Sample{T: t0, Values: map[string]float64{}, Scrapes: map[string]ScrapeStatus{}}
			tt.scraper.Sample(context.Background(), &s)
			st, ok := s.Scrapes[SchedulerComponent]
			if !ok || len(s.Values) != 0 || st.URL != tt.scraper.url || !strings.HasSuffix(st.Error, tt.wantErr) || (tt.wantErr == "") != (st.Error == "") {
				t.Errorf("sampled %+v, scrape %+v; want no values and the error ending %q", s.Values, st, tt.wantErr)
			}
		})
	}
}

// The history forgets what is older than Retention.
func TestHistoryKeepsTheLastHour(t *testing.T) {
	h := NewHistory(clocktesting.NewFakeClock(t0), 0, slog.New(slog.DiscardHandler))
	for _, at := range []time.Duration{0, 30 * time.Minute, time.Hour, time.Hour + time.Minute} {
		h.add(Sample{T: t0.Add(at)})
	}
	got := h.Samples()
	if len(got) != 3 || !got[0].T.Equal(t0.Add(30*time.Minute)) {
		t.Errorf("kept %d samples from %v, want 3 from 30m", len(got), got)
	}
}
