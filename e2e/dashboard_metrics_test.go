package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/chromedp/chromedp"

	"github.com/mkube/mkube/dashboard"
)

// The numbers view charts the scheduler's and the controller manager's
// own /metrics: the dashboard, as the read-only mkube:dashboard (whose
// ClusterRole may get the non-resource URL /metrics), scrapes their
// secure ports every half second (--sample-interval: the test does not
// wait 15 s rounds), and after a Deployment's three pods are scheduled,
// its samples and its page's charts have the real scheduler's attempts.
func TestDashboardChartsTheSchedulerAndControllerManagerMetrics(t *testing.T) {
	c := startClusterWith(t, clusterFlags{secure: true}, kubeletNode{name: "node01"})
	url := startDashboard(t, c, "--kubeconfig", filepath.Join(c.certDir(), "dashboard.kubeconfig"), "--sample-interval", "500ms",
		"--scheduler-metrics", fmt.Sprintf("https://127.0.0.1:%d/metrics", c.componentPorts["scheduler"]),
		"--controller-manager-metrics", fmt.Sprintf("https://127.0.0.1:%d/metrics", c.componentPorts["controller-manager"]))
	// A rate is the increase between two good rounds: the first round
	// that scrapes both components must come before the pods are
	// scheduled, or their attempts are in its baseline and never drawn.
	streamSamples(t, url, func(ss []dashboard.Sample) bool {
		if len(ss) == 0 || len(ss[len(ss)-1].Scrapes) < 2 {
			return false
		}
		for _, st := range ss[len(ss)-1].Scrapes {
			if st.URL == "" || st.Error != "" {
				return false
			}
		}
		return true
	})
	deployment := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"},
		"spec": map[string]any{"replicas": 3, "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "nginx", "image": "nginx"}}}}}}
	if code := c.do("POST", "/apis/apps/v1/namespaces/default/deployments", "application/json", deployment, nil); code != http.StatusCreated {
		t.Fatalf("create deployment: %d", code)
	}

	t.Run("the samples have the scheduler's three attempts and the controllers' queues", func(t *testing.T) {
		// Wait for the three pods bound in the API, then for a round
		// after the next one: the scheduler counts an attempt once its
		// binding returns.
		var bound time.Time
		samples := streamSamples(t, url, func(ss []dashboard.Sample) bool {
			if bound.IsZero() {
				var pods corev1.PodList
				c.do("GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb", "", nil, &pods)
				n := 0
				for _, p := range pods.Items {
					if p.Spec.NodeName != "" {
						n++
					}
				}
				if n == 3 {
					bound = time.Now()
				}
				return false
			}
			return ss[len(ss)-1].T.After(bound.Add(time.Second))
		})
		// Every attempt is in the samples: the rates, times the seconds
		// between rounds, add up to the counter's increase, 3 pods
		// scheduled once each, unless a round failed in between (past
		// its deadline on a loaded machine), which loses the attempts of
		// its interval.
		good, lost := -1, false // the first round both components answered; whether one failed after it
		for i, s := range samples {
			failed := false
			for comp, st := range s.Scrapes {
				if st.URL == "" {
					t.Errorf("round %s: %s is not configured", s.T, comp)
				}
				failed = failed || st.Error != ""
			}
			if failed && good >= 0 {
				t.Logf("round %s failed after a good one: %+v", s.T, s.Scrapes)
				lost = true
			}
			if !failed && good < 0 {
				good = i
			}
		}
		if good < 0 {
			t.Fatalf("no round scraped both components: %+v", samples[len(samples)-1].Scrapes)
		}
		scheduled := increase(samples, "scheduler/attempts/scheduled")
		if (!lost && math.Abs(scheduled-3) > 1e-6) || scheduled <= 0 || scheduled > 3+1e-6 {
			t.Errorf("the samples add up to %.3f scheduled attempts, want the 3 pods' (a round lost: %v)", scheduled, lost)
		}
		if adds := increase(samples, "controller-manager/workqueue/deployment/adds"); adds < 1-1e-6 {
			t.Errorf("the deployment controller's queue got %.3f keys, want the Deployment's at least", adds)
		}
		for _, series := range []string{"scheduler/pending/active", "scheduler/pending/backoff", "scheduler/pending/unschedulable", "scheduler/pending/gated",
			"controller-manager/workqueue/deployment/depth", "controller-manager/workqueue/replicaset/depth", "controller-manager/workqueue/replicaset/adds"} {
			if n := points(samples, series); n < 2 {
				t.Errorf("%s has %d points, want one a round", series, n)
			}
		}
	})

	t.Run("the page charts them", func(t *testing.T) {
		b := newBrowser(t)
		b.do(t, chromedp.Navigate(url))
		b.waitTrue(t, "the stream live", `document.getElementById("conn").textContent === "live"`)
		chart := func(title string) string {
			return fmt.Sprintf(`document.querySelector('#component-charts .chart[data-title^=%q]')`, title)
		}
		b.waitTrue(t, "the scheduled attempts drawn", chart("scheduler: scheduling attempts")+`?.querySelector('span[data-label=scheduled]')?.dataset.max > 0`)
		for title, labels := range map[string][]string{
			"scheduler: pods waiting":             {"active", "backoff", "gated", "unschedulable"},
			"scheduler: scheduling attempts":      {"scheduled"},
			"controller manager: keys added":      {"deployment", "replicaset"},
			"controller manager: workqueue depth": {"deployment", "replicaset"},
		} {
			got := evalJS[map[string]int](t, b, `Object.fromEntries([...`+chart(title)+`.querySelectorAll(".legend span")].map(s => [s.dataset.label, +s.dataset.points]))`)
			for _, l := range labels {
				if got[l] < 2 {
					t.Errorf("the chart %q draws %d points of %s, want its rounds'", title, got[l], l)
				}
			}
			if note := evalJS[string](t, b, chart(title)+`.querySelector(".chart-note").textContent`); note != "" {
				t.Errorf("the chart %q says %q", title, note)
			}
		}
		b.screenshot(t, "#charts", "dashboard-components.png")
		if errs := b.consoleErrors(); len(errs) > 0 {
			t.Errorf("JavaScript errors on the page:\n%s", strings.Join(errs, "\n"))
		}
	})
}

// streamSamples reads the dashboard's event stream, as the page does,
// until the samples so far (the snapshot's, then each new one) satisfy
// done, or fails after 90 s.
func streamSamples(t *testing.T, url string, done func([]dashboard.Sample) bool) []dashboard.Sample {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"/api/stream", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var samples []dashboard.Sample
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 64<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			event = e
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		switch event {
		case "snapshot":
			var snap dashboard.Snapshot
			if err := json.Unmarshal([]byte(data), &snap); err != nil {
				t.Fatalf("snapshot: %v", err)
			}
			samples = snap.Samples
		case "sample":
			var s dashboard.Sample
			if err := json.Unmarshal([]byte(data), &s); err != nil {
				t.Fatalf("sample: %v", err)
			}
			samples = append(samples, s)
		default:
			continue
		}
		if done(samples) {
			return samples
		}
	}
	last := dashboard.Sample{}
	if len(samples) > 0 {
		last = samples[len(samples)-1]
	}
	t.Fatalf("the stream ended (%v) after %d samples without the series wanted; the last: %+v", sc.Err(), len(samples), last)
	return nil
}

// increase is what a per-second rate series adds up to over the
// samples: each round's rate times the seconds since the round before.
func increase(samples []dashboard.Sample, series string) float64 {
	sum := 0.0
	for i := 1; i < len(samples); i++ {
		if v, ok := samples[i].Values[series]; ok {
			sum += v * samples[i].T.Sub(samples[i-1].T).Seconds()
		}
	}
	return sum
}

// points is how many samples have series.
func points(samples []dashboard.Sample, series string) int {
	n := 0
	for _, s := range samples {
		if _, ok := s.Values[series]; ok {
			n++
		}
	}
	return n
}
