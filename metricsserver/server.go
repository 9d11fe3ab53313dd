package metricsserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
)

// Config is what a Server needs from where it runs: on the host
// (cmd/metrics-server) or as a container of the catalog's image.
type Config struct {
	Options Options
	// API is the API server, as the server's own identity.
	API *client.Client
	// Kubelets is the client of the kubelets' endpoints: the server's
	// credentials and TLS settings (--kubelet-insecure-tls, --kubelet-certificate-authority).
	Kubelets *http.Client
	Clock    clock.Clock
	Log      *slog.Logger
}

// Server is one metrics server: it scrapes every node's kubelet each
// --metric-resolution and serves the latest usage as metrics.k8s.io.
type Server struct {
	opts        Options
	clock       clock.Clock
	log         *slog.Logger
	storage     *storage
	scraper     *scraper
	auth        *delegatedAuth
	metrics     *serverMetrics // its own /metrics (metrics.go)
	nodeInf     *client.Informer
	podInf      *client.Informer
	startOnce   sync.Once   // the informers run once, whether Start or Run starts them
	scrapedOnce atomic.Bool // the storage has been filled once: ready
}

// New prepares a server: it reads the API server's authentication
// configuration, and fails as metrics-server fails without it.
func New(ctx context.Context, cfg Config) (*Server, error) {
	auth, err := loadDelegatedAuth(ctx, cfg.API, cfg.Clock, cfg.Options.AuthenticationTolerateLookupFailure)
	if err != nil {
		return nil, err
	}
	metrics := newServerMetrics(cfg.Options.MetricResolution)
	return &Server{opts: cfg.Options, clock: cfg.Clock, log: cfg.Log, auth: auth, metrics: metrics,
		storage: newStorage(cfg.Options.MetricResolution),
		scraper: &scraper{opts: cfg.Options, client: cfg.Kubelets, now: cfg.Clock.Now, metrics: metrics},
		nodeInf: client.NewInformer(cfg.API, client.Nodes, "", client.ListOptions{}, cfg.Log),
		podInf:  client.NewInformer(cfg.API, client.Pods, "", client.ListOptions{}, cfg.Log),
	}, nil
}

// Start follows the nodes and pods until ctx ends; false if ctx ended
// before their first lists arrived.
func (s *Server) Start(ctx context.Context) bool {
	s.startOnce.Do(func() {
		go s.nodeInf.Run(ctx)
		go s.podInf.Run(ctx)
	})
	return client.WaitForSync(ctx, s.nodeInf, s.podInf)
}

// Run starts the server (if Start has not) and scrapes every
// resolution of its clock until ctx ends.
func (s *Server) Run(ctx context.Context) {
	if !s.Start(ctx) {
		return
	}
	for {
		s.ScrapeOnce(ctx)
		timer := s.clock.NewTimer(s.opts.MetricResolution)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C():
		}
	}
}

// ScrapeOnce scrapes every node once and stores what they answered.
func (s *Server) ScrapeOnce(ctx context.Context) {
	start := s.clock.Now()
	nodes := s.nodes()
	batch := s.scraper.scrapeAll(ctx, nodes, func(msg string, kv ...any) { s.log.Error(msg, kv...) })
	s.storage.Store(batch)
	s.metrics.tickDuration.Observe(s.clock.Since(start).Seconds())
	s.metrics.observeStored(s.storage.points())
	s.scrapedOnce.Store(true)
	s.log.Debug("Scrape finished", "nodes", len(nodes), "nodeMetrics", len(batch.Nodes), "podMetrics", len(batch.Pods), "duration", s.clock.Since(start))
}

func (s *Server) nodes() []*corev1.Node { return objectsOf[*corev1.Node](s.nodeInf.Cache().List()) }
func (s *Server) pods() []*corev1.Pod   { return objectsOf[*corev1.Pod](s.podInf.Cache().List()) }

// objectsOf is the cache's objects in namespace and name order, so that
// lists come out sorted as the API server's do.
func objectsOf[T metav1.Object](objs []runtime.Object) []T {
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(T))
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].GetNamespace() != out[j].GetNamespace() {
			return out[i].GetNamespace() < out[j].GetNamespace()
		}
		return out[i].GetName() < out[j].GetName()
	})
	return out
}

// healthPaths need no permission: the kubelet probes them.
var healthPaths = []string{"/healthz", "/readyz", "/livez"}

// Handler serves HTTP requests that arrived with the client certificates
// peers: authenticate (or 401), authorize (or 403), then route.
func (s *Server) Handler(peers []*x509.Certificate) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := newRequestInfo(r)
		user, err := s.auth.authenticate(r, peers)
		if err != nil {
			s.log.Error("Unable to authenticate the request", "err", err)
			writeAPIError(w, apierrors.NewUnauthorized("Unauthorized"))
			return
		}
		if !slices.Contains(healthPaths, r.URL.Path) {
			allowed, reason, err := s.auth.authorize(r.Context(), user, info)
			switch {
			case err != nil:
				writeAPIError(w, apierrors.NewInternalError(err))
				return
			case !allowed:
				writeAPIError(w, forbidden(user.Username, info, reason))
				return
			}
		}
		s.route(w, r, info)
	})
}

// TLSHandler is Handler for a net/http server whose requests carry their
// TLS state.
func (s *Server) TLSHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var peers []*x509.Certificate
		if r.TLS != nil {
			peers = r.TLS.PeerCertificates
		}
		s.Handler(peers).ServeHTTP(w, r)
	})
}

// TLSConfig asks for (but does not require) a client certificate, which
// authentication verifies itself against the CAs it trusts.
func TLSConfig(cert tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12}
}

func (s *Server) route(w http.ResponseWriter, r *http.Request, info requestInfo) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case path == "/readyz" && !s.scrapedOnce.Load():
		http.Error(w, "[-]metric-storage-ready failed: not metrics to serve\nreadyz check failed", http.StatusInternalServerError)
	case path == "/metrics": // authorized as a non-resource path, as metrics-server's
		s.metrics.handler().ServeHTTP(w, r)
	case slices.Contains(healthPaths, path):
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok")
	case path == "/apis":
		group := apiGroup()
		group.TypeMeta = metav1.TypeMeta{}
		writeJSON(w, http.StatusOK, metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{group}})
	case path == "/apis/"+metricsGroup:
		writeJSON(w, http.StatusOK, apiGroup())
	case path == apiPrefix:
		writeJSON(w, http.StatusOK, apiResources())
	case info.resource != "":
		s.serveResource(w, r, info)
	default:
		http.NotFound(w, r)
	}
}

// forbidden is the 403 of the generic server's authorization filter.
func forbidden(user string, info requestInfo, reason string) error {
	msg := fmt.Sprintf("User %q cannot %s path %q", user, info.verb, info.path)
	if info.resource != "" {
		msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q", user, info.verb, info.resource, metricsGroup)
		if info.namespace != "" {
			msg += fmt.Sprintf(" in the namespace %q", info.namespace)
		} else {
			msg += " at the cluster scope"
		}
	}
	if reason != "" {
		msg += ": " + reason
	}
	if info.resource == "" {
		return apierrors.NewForbidden(schema.GroupResource{}, "", fmt.Errorf("%s", msg))
	}
	return apierrors.NewForbidden(schema.GroupResource{Group: metricsGroup, Resource: info.resource}, info.name, fmt.Errorf("%s", msg))
}

// FollowedPods is how many pods the server knows of (for tests that
// wait for its informer).
func (s *Server) FollowedPods() int { return s.podInf.Cache().Len() }
