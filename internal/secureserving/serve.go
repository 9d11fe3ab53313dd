package secureserving

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	authenticationv1 "k8s.io/api/authentication/v1"
)

// Check is one named health check of /readyz (/healthz and /livez only
// ping, as a component's liveness is its process answering).
type Check struct {
	Name string
	Run  func() error
}

// Config is what a component's port serves.
type Config struct {
	// Gatherer is the component's own registry, served at /metrics.
	Gatherer prometheus.Gatherer
	// Reviewer authenticates and authorizes every path not in
	// AlwaysAllowPaths; nil refuses them all.
	Reviewer         Reviewer
	AlwaysAllowPaths []string
	// Ready are /readyz's checks besides ping.
	Ready []Check
	Log   *slog.Logger
}

// Handler serves /metrics, /healthz, /readyz and /livez behind delegated
// authentication and authorization.
func Handler(cfg Config) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(cfg.Gatherer, promhttp.HandlerOpts{}))
	mux.Handle("GET /healthz", healthHandler("healthz", nil))
	mux.Handle("GET /livez", healthHandler("livez", nil))
	mux.Handle("GET /readyz", healthHandler("readyz", cfg.Ready))
	return withAuth(mux, cfg)
}

// healthHandler answers as k8s.io/apiserver's healthz: "ok", or with
// ?verbose each check's line and the verdict; 500 when a check fails.
func healthHandler(name string, extra []Check) http.Handler {
	checks := append([]Check{{Name: "ping", Run: func() error { return nil }}}, extra...)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		failed := false
		for _, c := range checks {
			if err := c.Run(); err != nil {
				failed = true
				fmt.Fprintf(&b, "[-]%s failed: reason withheld\n", c.Name)
				continue
			}
			fmt.Fprintf(&b, "[+]%s ok\n", c.Name)
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if failed {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "%s%s check failed\n", b.String(), name)
			return
		}
		if _, verbose := r.URL.Query()["verbose"]; verbose {
			fmt.Fprintf(w, "%s%s check passed\n", b.String(), name)
			return
		}
		w.Write([]byte("ok"))
	})
}

// withAuth lets AlwaysAllowPaths through, and asks the API server about
// everything else: who the client is (a verified client certificate, or
// a bearer token through a TokenReview), then whether that user may get
// the path (a SubjectAccessReview), as kube-scheduler's port does.
func withAuth(next http.Handler, cfg Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slices.Contains(cfg.AlwaysAllowPaths, r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		if cfg.Reviewer == nil {
			http.Error(w, "Forbidden: no API server to authorize this request", http.StatusForbidden)
			return
		}
		user, ok := authenticate(r, cfg.Reviewer, cfg.Log)
		if !ok {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		verb := strings.ToLower(r.Method)
		allowed, reason, err := cfg.Reviewer.ReviewAccess(r.Context(), user, verb, r.URL.Path)
		if err != nil {
			cfg.Log.Warn("subject access review failed", "user", user.Username, "path", r.URL.Path, "err", err)
			http.Error(w, "Internal Server Error: authorization could not be checked", http.StatusInternalServerError)
			return
		}
		if !allowed {
			cfg.Log.Debug("forbidden", "user", user.Username, "verb", verb, "path", r.URL.Path, "reason", reason)
			http.Error(w, fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=, subresource=)", user.Username, verb), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authenticate is the client certificate's subject, when the TLS layer
// verified one against the client CA, else the bearer token's user.
func authenticate(r *http.Request, rev Reviewer, log *slog.Logger) (authenticationv1.UserInfo, bool) {
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
		subject := r.TLS.VerifiedChains[0][0].Subject
		return authenticationv1.UserInfo{Username: subject.CommonName, Groups: append(subject.Organization, "system:authenticated")}, true
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return authenticationv1.UserInfo{}, false
	}
	user, ok, err := rev.ReviewToken(r.Context(), strings.TrimSpace(token))
	if err != nil {
		log.Warn("token review failed", "err", err)
		return authenticationv1.UserInfo{}, false
	}
	return user, ok
}

// Serve serves h over TLS on ln until ctx ends, then shuts down, giving
// requests in flight a few seconds.
func Serve(ctx context.Context, ln net.Listener, tlsCfg *tls.Config, h http.Handler, log *slog.Logger) error {
	hs := &http.Server{Handler: h, TLSConfig: tlsCfg, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)} // TLS handshakes of scanners and curl -k
	go func() { // owner: Serve; returns when ctx ends
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(shutdown)
	}()
	if err := hs.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
