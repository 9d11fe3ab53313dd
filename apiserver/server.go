package apiserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/apiserver/admission"
	"github.com/mkube/mkube/apiserver/admission/policy"
	"github.com/mkube/mkube/apiserver/admission/webhook"
	"github.com/mkube/mkube/apiserver/audit"
	"github.com/mkube/mkube/apiserver/authentication"
	"github.com/mkube/mkube/apiserver/authentication/serviceaccount"
	"github.com/mkube/mkube/apiserver/authorization"
	"github.com/mkube/mkube/apiserver/kubeletclient"
	"github.com/mkube/mkube/apiserver/storageformat"
	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/seedstep"
	"github.com/mkube/mkube/internal/version"
	"github.com/mkube/mkube/store"
)

// Config wires a Server.
type Config struct {
	Store *store.Store
	// Registry is what the server serves: registry.New() in
	// apiserver/registry has every kind mkube has.
	Registry *Registry
	// Admission is the admission chain; nil runs every plugin.
	Admission *admission.Chain
	// Webhooks calls the cluster's admission webhooks for the chain's
	// webhook plugins; nil calls none (admission_webhooks.go).
	Webhooks *webhook.Dispatcher
	// Policies evaluates the cluster's ValidatingAdmissionPolicies for
	// the chain's ValidatingAdmissionPolicy plugin; nil evaluates none.
	Policies *policy.Evaluator
	// MutatingPolicies applies its MutatingAdmissionPolicies for the
	// MutatingAdmissionPolicy plugin; nil applies none.
	MutatingPolicies *policy.Mutator
	// Authenticator says who sent each request; nil takes every request
	// for system:unsecured (in system:masters), as the plain port does.
	Authenticator *authentication.Authenticator
	// ServiceAccountTokens issues the tokens of serviceaccounts/<name>/token
	// (TokenRequest) and is given the server's storage to check them
	// against; nil answers TokenRequests 404, as a kube-apiserver without
	// --service-account-issuer.
	ServiceAccountTokens *serviceaccount.Tokens
	// Audit, if set, logs every request (--audit-log-path).
	Audit *audit.Logger
	// Authorizer decides whether that user may do what the request asks
	// (403 Forbidden if not): authorization.Chain of --authorization-mode.
	// Nil allows everything, as --authorization-mode=AlwaysAllow.
	Authorizer authorization.Authorizer
	Log        *slog.Logger
	// WatchCacheSize is how many recent events each resource keeps for
	// watchers; 0 means 4096, enough for a few seconds of a busy cluster.
	WatchCacheSize int
	// ProgressInterval is how often etcd is asked for progress, so idle
	// watch caches (and so bookmarks) follow the global revision.
	ProgressInterval time.Duration
	// Clock is the server's time: creation and deletion timestamps, table
	// ages, watch bookmarks, progress requests. Nil is the real clock.
	Clock clock.WithTicker
	// Aggregated are the group-versions proxied to aggregated API servers
	// (apiserver/aggregator); nil proxies none.
	Aggregated Aggregated
	// Kubelet is how pods/log, exec, attach, portforward and nodes/proxy
	// reach the kubelets (--kubelet-client-certificate, ...); nil is
	// HTTPS without a client certificate or verification.
	Kubelet *kubeletclient.Client
	// Profiling serves Go's profiles at /debug/pprof/, as kube-apiserver's
	// --profiling does: `go tool pprof http://HOST:8080/debug/pprof/profile`.
	Profiling bool
	// StorageMediaType is the format objects are written to etcd in, as
	// kube-apiserver's --storage-media-type (package storageformat): ""
	// or storageformat.JSON, readable with etcdctl, or
	// storageformat.Protobuf, Kubernetes' default. Either is read.
	StorageMediaType storageformat.MediaType
}

// Server is the API server: an http.Handler over the registry's resources.
type Server struct {
	store   *store.Store
	log     *slog.Logger
	clock   clock.WithTicker
	cfg     Config
	handler http.Handler
	// metrics are the server's Prometheus series (metrics.go), served at
	// /metrics.
	metrics *serverMetrics
	// codec writes objects to etcd in cfg.StorageMediaType and reads both
	// formats.
	codec storageformat.Codec

	// served is what the server serves now (catalog.go); replaceMu orders
	// the changes to it, which runCtx, Start's context, outlives.
	served    atomic.Pointer[catalog]
	replaceMu sync.Mutex
	runCtx    context.Context

	fieldManagersMu sync.Mutex
	fieldManagers   map[*Resource]*managedfields.FieldManager // server-side apply, by resource

	openAPIMu   sync.Mutex
	openAPIDocs map[schema.GroupVersion][]byte // encoded once, on first request
	openAPIV2   []byte
	// openAPIV2Protobuf is openAPIV2 as protobuf, once asked for.
	openAPIV2Protobuf []byte
}

// New builds the server; Start must run before it serves watches.
func New(cfg Config) *Server {
	if cfg.Registry == nil {
		cfg.Registry = NewRegistry()
	}
	learnConversions(cfg.Registry.All())
	if cfg.Admission == nil {
		cfg.Admission = admission.DefaultChain()
	}
	if cfg.Authorizer == nil {
		cfg.Authorizer = authorization.AlwaysAllow{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.WatchCacheSize <= 0 {
		cfg.WatchCacheSize = 4096
	}
	if cfg.ProgressInterval <= 0 {
		cfg.ProgressInterval = 5 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	s := &Server{store: cfg.Store, log: cfg.Log, clock: cfg.Clock, cfg: cfg,
		fieldManagers: map[*Resource]*managedfields.FieldManager{}, codec: storageformat.NewCodec(cfg.StorageMediaType, scheme)}
	s.metrics = newServerMetrics(s, cfg.Clock)
	s.served.Store((&catalog{}).with(s, nil, cfg.Registry.All()))
	if t := cfg.ServiceAccountTokens; t != nil && t.Objects == nil {
		t.Objects = objects{s} // a token is good while its service account and pod are
	}
	s.handler = s.routes()
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Start creates the objects every cluster starts with (Resource.Bootstrap)
// and starts one etcd watch per resource (the watch caches) and the
// progress requests that keep them current. It returns once every cache is
// watching; they stop with ctx.
func (s *Server) Start(ctx context.Context) error {
	if err := s.bootstrap(ctx); err != nil {
		return err
	}
	for res, c := range s.served.Load().caches {
		if err := startCache(ctx, c); err != nil {
			return err
		}
		s.log.Debug("watch cache started", "resource", res.Name)
	}
	s.replaceMu.Lock()
	s.runCtx = ctx
	s.replaceMu.Unlock()
	go func() { // owner: the server; stops with ctx
		t := s.clock.NewTicker(s.cfg.ProgressInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C():
				if err := s.store.RequestProgress(ctx); err != nil && ctx.Err() == nil {
					s.log.Debug("etcd progress request failed", "err", err)
				}
			}
		}
	}()
	return nil
}

// Compacted tells the watch caches that etcd's history before rev is gone:
// a watch from an older resourceVersion must now get 410 Gone, as etcd
// would answer it.
func (s *Server) Compacted(rev int64) {
	for _, c := range s.served.Load().caches {
		c.compacted(rev)
	}
}

// bootstrap creates the resources' Bootstrap objects that are missing:
// cluster-scoped ones first, so the built-in namespaces exist before what
// goes into them.
func (s *Server) bootstrap(ctx context.Context) error {
	for _, namespaced := range []bool{false, true} {
		for _, res := range s.resources() {
			if res.Namespaced != namespaced {
				continue
			}
			for _, obj := range res.Bootstrap {
				if _, err := s.storageOf(res).Create(ctx, obj.DeepCopyObject()); err != nil && !apierrors.IsAlreadyExists(err) {
					return fmt.Errorf("bootstrap %s: %w", res.Name, err)
				}
			}
		}
	}
	return nil
}

func (s *Server) routes() http.Handler {
	r := chi.NewRouter()
	r.Use(s.instrument, s.audit, s.recoverer, s.authenticate, s.authorize)
	r.Get("/healthz", s.health)
	r.Get("/livez", s.health)
	r.Get("/readyz", s.health)
	r.Get("/metrics", s.serveMetrics)
	r.Get("/metrics/slis", s.serveSLIs)
	r.Get("/version", s.version)
	s.routeIssuerDiscovery(r) // issuer_discovery.go
	r.Get("/openapi/v2", s.serveOpenAPIV2)
	r.Get("/openapi/v3", s.serveOpenAPIIndex)
	r.Get("/openapi/v3/*", s.serveOpenAPIDocument)
	// Discovery answers with or without a trailing slash, as kube-apiserver
	// does (`GET /apis/` is what some clients and the e2e suite send).
	for _, slash := range []string{"", "/"} {
		r.Get("/api"+slash, s.serveAPIVersions)
		r.Get("/apis"+slash, s.serveAPIGroups)
		r.Get("/api/{version}"+slash, func(w http.ResponseWriter, r *http.Request) {
			s.serveResourceList(w, r, schema.GroupVersion{Version: chi.URLParam(r, "version")})
		})
		r.Get("/apis/{group}"+slash, func(w http.ResponseWriter, r *http.Request) { s.serveAPIGroup(w, r, chi.URLParam(r, "group")) })
		r.Get("/apis/{group}/{version}"+slash, func(w http.ResponseWriter, r *http.Request) {
			if proxy := s.aggregated(r); proxy != nil {
				proxy.ServeHTTP(w, r)
				return
			}
			s.serveResourceList(w, r, schema.GroupVersion{Group: chi.URLParam(r, "group"), Version: chi.URLParam(r, "version")})
		})
	}
	if s.cfg.Profiling {
		r.HandleFunc("/debug/pprof/*", pprof.Index)
		r.HandleFunc("/debug/pprof/profile", pprof.Profile)
		r.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	r.HandleFunc("/api/*", s.serveResource)
	r.HandleFunc("/apis/*", s.serveResource)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, apierrors.NewNotFound(schema.GroupResource{}, r.URL.Path))
	})
	return r
}

// health answers ok while etcd answers, and records its checks (ping,
// etcd) in the health SLIs of /metrics/slis.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	kind := strings.TrimPrefix(r.URL.Path, "/")
	s.metrics.slis.observe("ping", kind, nil)
	_, err := s.store.Revision(ctx)
	s.metrics.slis.observe("etcd", kind, err)
	if err != nil {
		http.Error(w, "etcd: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("ok"))
}

// version answers /version. kubectl picks its client version from the
// minor, so mkube says it speaks Kubernetes 1.32 (package version).
func (s *Server) version(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, version.Info())
}

// recoverer turns a handler panic into a 500 Status instead of a dropped
// connection, and logs it.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", v)
				writeError(w, apierrors.NewInternalError(errorf("%v", v)))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// logWrite logs a successful write, in the seed's terms where the kind
// says which step of seed 000 it is.
func (s *Server) logWrite(q *Request, obj runtime.Object) {
	args := []any{"verb", q.Info.Verb, "resource", q.Storage.res.Name, "object", client.KeyOf(obj), "rv", rvOf(obj)}
	if q.Info.Subresource != "" {
		args = append(args, "subresource", q.Info.Subresource)
	}
	msg := "stored in etcd"
	if ws := q.Storage.res.WriteStep; ws != nil {
		if step, what := ws(q.Info, obj); step != 0 {
			args = append([]any{seedstep.Key, step}, args...)
			msg = what
			s.metrics.observeStep(step, obj)
		}
	}
	s.log.Info(msg, args...)
}

// objects is what admission may read: the server's storages, by resource.
type objects struct{ s *Server }

// Objects are the server's objects, as admission reads them: for what
// runs inside the API server and reads besides its own kind (a
// conversion webhook's Service).
func (s *Server) Objects() admission.Objects { return objects{s} }

// Kubelet is the server's client of the kubelets' port: the admission
// webhooks and aggregated API servers behind a Service are reached
// through their pods' kubelets with it (webhookclient's dial.go).
func (o objects) Kubelet() *kubeletclient.Client { return o.s.cfg.Kubelet }

func (o objects) storage(gvr schema.GroupVersionResource) (*Storage, error) {
	st := o.s.StorageFor(gvr)
	if st == nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("admission reads %s, which this server does not serve", gvr))
	}
	return st, nil
}

// StorageFor is the storage of a resource by its full name, for what the
// API server itself keeps in place (the default/kubernetes Service); nil
// if the server does not serve it.
func (s *Server) StorageFor(gvr schema.GroupVersionResource) *Storage {
	c := s.served.Load()
	res, ok := c.lookup(gvr.GroupVersion(), gvr.Resource)
	if !ok {
		return nil
	}
	return c.storages[res]
}

// resources is every resource served now, sorted.
func (s *Server) resources() []*Resource { return s.served.Load().all }

// storageOf is a served resource's storage (nil once it is not served).
func (s *Server) storageOf(res *Resource) *Storage { return s.served.Load().storages[res] }

func (o objects) Get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error) {
	st, err := o.storage(gvr)
	if err != nil {
		return nil, err
	}
	return st.Get(ctx, ns, name)
}

func (o objects) List(ctx context.Context, gvr schema.GroupVersionResource, ns string) ([]runtime.Object, error) {
	st, err := o.storage(gvr)
	if err != nil {
		return nil, err
	}
	objs, _, err := st.List(ctx, ns, store.ListOptions{})
	return objs, err
}
