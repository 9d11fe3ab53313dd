package secureserving

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	authenticationv1 "k8s.io/api/authentication/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeReviewer knows one token, "good" (user alice), and lets alice get
// /metrics.
type fakeReviewer struct{ fail bool }

func (f fakeReviewer) ReviewToken(_ context.Context, token string) (authenticationv1.UserInfo, bool, error) {
	if f.fail {
		return authenticationv1.UserInfo{}, false, errors.New("api server down")
	}
	switch token {
	case "good":
		return authenticationv1.UserInfo{Username: "alice"}, true, nil
	case "bob":
		return authenticationv1.UserInfo{Username: "bob"}, true, nil
	}
	return authenticationv1.UserInfo{}, false, nil
}

func (f fakeReviewer) ReviewAccess(_ context.Context, user authenticationv1.UserInfo, verb, path string) (bool, string, error) {
	return user.Username == "alice" && verb == "get" && path == "/metrics", "", nil
}

func TestPathsAreAuthorizedAsKubeSchedulersPort(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "scheduler_schedule_attempts_total", Help: "h"}))
	notReady := errors.New("informers not synced")
	h := Handler(Config{Gatherer: reg, Reviewer: fakeReviewer{}, AlwaysAllowPaths: []string{"/healthz", "/readyz", "/livez"},
		Ready: []Check{{Name: "informer-sync", Run: func() error { return notReady }}}, Log: slog.New(slog.DiscardHandler)})
	tests := []struct {
		name, path, token string
		code              int
		body              string
	}{
		{"healthz is open", "/healthz", "", 200, "ok"},
		{"livez is open", "/livez", "", 200, "ok"},
		{"readyz is open and runs its checks", "/readyz?verbose", "", 500, "[+]ping ok\n[-]informer-sync failed: reason withheld\nreadyz check failed\n"},
		{"metrics without credentials", "/metrics", "", 401, "Unauthorized\n"},
		{"metrics with an unknown token", "/metrics", "nope", 401, "Unauthorized\n"},
		{"metrics for a user RBAC does not allow", "/metrics", "bob", 403, "Forbidden (user=bob, verb=get, resource=, subresource=)\n"},
		{"metrics for an allowed user", "/metrics", "good", 200, "scheduler_schedule_attempts_total 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", "https://127.0.0.1:10259"+tt.path, nil)
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			rec := &recorder{header: http.Header{}}
			h.ServeHTTP(rec, req)
			if rec.code != tt.code || !strings.Contains(rec.body.String(), tt.body) {
				t.Errorf("GET %s: %d %q, want %d with %q", tt.path, rec.code, rec.body.String(), tt.code, tt.body)
			}
		})
	}
}

type recorder struct {
	header http.Header
	code   int
	body   strings.Builder
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(200)
	return r.body.Write(b)
}

func TestSelfSignedPortServesTLSAndAPortInUseSaysSo(t *testing.T) {
	o := &Options{BindAddress: "127.0.0.1", Port: 0, AlwaysAllowPaths: []string{"/healthz"}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg, err := o.TLSConfig(clocktesting.NewFakePassiveClock(time.Now()), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- Serve(ctx, ln, tlsCfg, Handler(Config{Gatherer: prometheus.NewRegistry(), AlwaysAllowPaths: o.AlwaysAllowPaths, Log: slog.New(slog.DiscardHandler)}), slog.New(slog.DiscardHandler))
	}()
	defer func() { cancel(); <-done }()

	// The certificate is self-signed for 127.0.0.1: trust it as a learner's curl --cacert would.
	pool := x509.NewCertPool()
	leaf, _ := x509.ParseCertificate(tlsCfg.Certificates[0].Certificate[0])
	pool.AddCert(leaf)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Get("https://" + ln.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok" {
		t.Errorf("GET /healthz: %d %q", resp.StatusCode, body)
	}

	_, port, _ := net.SplitHostPort(ln.Addr().String())
	o.Port, _ = strconv.Atoi(port)
	if _, err := o.Listen(); err == nil || !strings.Contains(err.Error(), "failed to listen on 127.0.0.1:"+port) ||
		!strings.Contains(err.Error(), "address already in use") {
		t.Errorf("Listen on a port in use: %v", err)
	}
}
