package dashboard

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ScrapeStatus is how one component's /metrics answered a round.
type ScrapeStatus struct {
	// URL is what the dashboard scrapes; empty when its flag was not
	// given (the page says "not configured").
	URL   string `json:"url,omitempty"`
	Error string `json:"error,omitempty"`
}

// maxExposition bounds what one scrape reads: a component's /metrics is
// tens of kilobytes (its Go runtime, its histograms); 16 MiB is
// Prometheus' own default body_size_limit order of magnitude, far above it.
const maxExposition = 16 << 20

// Scraper reads one component's /metrics each round, as Prometheus
// scrapes a target: GET the text exposition, parse it with the
// Prometheus library (expfmt), and keep the few series the numbers view
// charts (components.go says which). It is a Source.
type Scraper struct {
	component string // "scheduler", "controller-manager": the series' prefix
	url       string // empty: not configured
	client    *http.Client
	anonymous bool // the client has no credentials: a 401 is the reason
	read      func(families map[string]*dto.MetricFamily, r *rates) map[string]float64
	rates     rates
}

func (s *Scraper) Sample(ctx context.Context, smp *Sample) {
	st := ScrapeStatus{URL: s.url}
	defer func() { smp.Scrapes[s.component] = st }()
	if s.url == "" {
		return
	}
	families, err := s.scrape(ctx)
	if err != nil {
		st.Error = err.Error()
		s.rates.forget() // the next rate needs two scrapes in a row again
		return
	}
	s.rates.begin(smp.T)
	for name, v := range s.read(families, &s.rates) {
		smp.Values[s.component+"/"+name] = v
	}
	s.rates.commit()
}

// scrape GETs the exposition and parses it, asking for the text format
// (promhttp answers in what the Accept header asks).
func (s *Scraper) scrape(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", s.url, nil)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", s.url, err)
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape: %w", err)
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, maxExposition)
	if resp.StatusCode != http.StatusOK {
		// The component's answer says who it took the dashboard for:
		// "Forbidden (user=mkube:dashboard, verb=get, ...)".
		msg, _ := io.ReadAll(io.LimitReader(body, 512))
		err := fmt.Errorf("scrape %s: %s: %s", s.url, resp.Status, strings.TrimSpace(string(msg)))
		if resp.StatusCode == http.StatusUnauthorized && s.anonymous {
			err = fmt.Errorf("%w (the dashboard has no credentials to show it: run it with --kubeconfig)", err)
		}
		return nil, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(body)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: parse: %w", s.url, err)
	}
	return families, nil
}

// ScrapeClient is the HTTP client the dashboard scrapes the components'
// ports with, as its own identity from kubeconfig (its client
// certificate or token, the same it shows the API server): the component
// asks the API server who that is (TokenReview, or its client CA) and
// whether it may get /metrics (SubjectAccessReview), which RBAC's
// mkube:dashboard grants. With no kubeconfig (the learner's plain port)
// it has no credentials, and the components answer 401.
//
// The components' serving certificates are made in memory at their
// start (package secureserving) and signed by no one the dashboard could
// trust, so it does not verify them, as Prometheus' kube-scheduler job
// does not (insecure_skip_verify in addons/prometheus/prometheus.yml).
//
// Each scrape's deadline is its round's context (History gives a source
// at most the sample interval), so the client sets none of its own.
func ScrapeClient(kubeconfig string) (c *http.Client, anonymous bool, err error) {
	if kubeconfig == "" {
		return &http.Client{Transport: &http.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}}}, true, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, false, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	// client-go refuses a CA together with Insecure.
	cfg.TLSClientConfig.Insecure, cfg.TLSClientConfig.CAFile, cfg.TLSClientConfig.CAData = true, "", nil
	c, err = rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, false, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	return c, false, nil
}

// rates turns counters into per-second rates between two scrapes in a
// row, as PromQL's rate() over just those two points: the increase over
// the seconds between them. A counter lower than before is a component
// that restarted (a counter reset): it counted its new value from 0.
// A counter missing from the previous scrape had not counted yet:
// client_golang makes a labelled counter's series at its first increment,
// so a series that appears counted from 0 too.
type rates struct {
	prev   map[string]float64
	prevAt time.Time // zero: no previous scrape in a row
	next   map[string]float64
	now    time.Time
}

func (r *rates) begin(now time.Time) { r.next, r.now = map[string]float64{}, now }
func (r *rates) commit()             { r.prev, r.prevAt = r.next, r.now }
func (r *rates) forget()             { r.prev, r.prevAt = nil, time.Time{} }

// rate records counter key at v and is its rate per second since the
// previous scrape; ok is false at the first scrape, which has none.
func (r *rates) rate(key string, v float64) (perSecond float64, ok bool) {
	r.next[key] = v
	secs := r.now.Sub(r.prevAt).Seconds()
	if r.prevAt.IsZero() || secs <= 0 {
		return 0, false
	}
	increase := v - r.prev[key]
	if increase < 0 {
		increase = v
	}
	return increase / secs, true
}

// value is a sample's value, whatever its type (a counter's, a gauge's,
// or an untyped one's).
func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	default:
		return m.GetUntyped().GetValue()
	}
}

// label is m's value of label name, "" without it.
func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// sumBy adds up family's samples by their value of label, as PromQL's
// sum by (label): the scheduler counts attempts by result and profile,
// and a learner's question is by result.
func sumBy(family *dto.MetricFamily, name string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range family.GetMetric() {
		out[label(m, name)] += value(m)
	}
	return out
}
