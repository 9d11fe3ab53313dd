package apiserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/mkube/mkube/store"
)

// Config wires a Server.
type Config struct {
	Store    *store.Store
	Registry *Registry // nil: DefaultRegistry()
	Log      *slog.Logger
	// WatchCacheSize is how many recent events each resource keeps for
	// watchers; 0 means 4096, enough for a few seconds of a busy cluster.
	WatchCacheSize int
	// ProgressInterval is how often etcd is asked for progress, so idle
	// watch caches (and so bookmarks) follow the global revision.
	ProgressInterval time.Duration
	Now              func() time.Time
	// Profiling serves Go's profiles at /debug/pprof/, as kube-apiserver's
	// --profiling does: `go tool pprof http://HOST:8080/debug/pprof/profile`.
	Profiling bool
}

// Server is the API server: an http.Handler over the registry's resources.
type Server struct {
	registry *Registry
	store    *store.Store
	storages map[*Resource]*storage
	caches   map[*Resource]*watchCache
	log      *slog.Logger
	now      func() time.Time
	cfg      Config
	handler  http.Handler

	fieldManagersMu sync.Mutex
	fieldManagers   map[*Resource]*managedfields.FieldManager // server-side apply, by resource

	openAPIMu   sync.Mutex
	openAPIDocs map[schema.GroupVersion][]byte // encoded once, on first request
}

// New builds the server; Start must run before it serves watches.
func New(cfg Config) *Server {
	if cfg.Registry == nil {
		cfg.Registry = DefaultRegistry()
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
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{registry: cfg.Registry, store: cfg.Store, log: cfg.Log, now: cfg.Now, cfg: cfg,
		storages: map[*Resource]*storage{}, caches: map[*Resource]*watchCache{},
		fieldManagers: map[*Resource]*managedfields.FieldManager{}}
	for _, res := range cfg.Registry.All() {
		st := &storage{res: res, store: cfg.Store, now: cfg.Now, namespaceExists: s.namespaceExists}
		if res.Admit != nil {
			st.admission = func(ctx context.Context, obj, old runtime.Object) error { return res.Admit(ctx, s, obj, old) }
		}
		s.storages[res] = st
		s.caches[res] = newWatchCache(st, cfg.WatchCacheSize, cfg.Log)
	}
	s.handler = s.routes()
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Start creates the built-in namespaces and starts one etcd watch per
// resource (the watch caches) and the progress requests that keep them
// current. It returns once every cache is watching; they stop with ctx.
func (s *Server) Start(ctx context.Context) error {
	if err := s.bootstrapNamespaces(ctx); err != nil {
		return err
	}
	for res, c := range s.caches {
		ready := make(chan struct{})
		go c.run(ctx, ready) // owner: the server; stops with ctx
		select {
		case <-ready:
		case <-ctx.Done():
			return ctx.Err()
		}
		s.log.Debug("watch cache started", "resource", res.Name)
	}
	go func() { // owner: the server; stops with ctx
		t := time.NewTicker(s.cfg.ProgressInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := s.store.RequestProgress(ctx); err != nil && ctx.Err() == nil {
					s.log.Debug("etcd progress request failed", "err", err)
				}
			}
		}
	}()
	return nil
}

// storageOf finds a resource's storage by name, for admission hooks that
// read other kinds.
func (s *Server) storageOf(gv schema.GroupVersion, name string) *storage {
	res, _ := s.registry.Lookup(gv, name)
	return s.storages[res]
}

// Compacted tells the watch caches that etcd's history before rev is gone:
// a watch from an older resourceVersion must now get 410 Gone, as etcd
// would answer it.
func (s *Server) Compacted(rev int64) {
	for _, c := range s.caches {
		c.compacted(rev)
	}
}

// bootstrapNamespaces creates the namespaces every cluster starts with,
// their default ServiceAccounts and the system PriorityClasses.
func (s *Server) bootstrapNamespaces(ctx context.Context) error {
	st := s.storages[namespacesResource]
	for _, name := range []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease} {
		_, err := st.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: name}}
		if _, err := s.storages[serviceAccountsResource].Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	for _, pc := range systemPriorityClasses {
		if _, err := s.storages[priorityClassesResource].Create(ctx, pc.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// namespaceExists: writing into a namespace that does not exist is 404, as
// the NamespaceLifecycle admission plugin answers.
func (s *Server) namespaceExists(ctx context.Context, ns string) error {
	if ns == "" {
		return badRequest("a namespace is required for namespaced resources")
	}
	obj, err := s.storages[namespacesResource].Get(ctx, "", ns)
	if err != nil {
		return err
	}
	if obj.(*corev1.Namespace).DeletionTimestamp != nil {
		return apierrors.NewForbidden(namespacesResource.GroupResource(), ns,
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns))
	}
	return nil
}

func (s *Server) routes() http.Handler {
	r := chi.NewRouter()
	r.Use(s.recoverer)
	r.Get("/healthz", s.health)
	r.Get("/livez", s.health)
	r.Get("/readyz", s.health)
	r.Get("/version", s.version)
	r.Get("/openapi/v3", s.serveOpenAPIIndex)
	r.Get("/openapi/v3/*", s.serveOpenAPIDocument)
	r.Get("/api", s.serveAPIVersions)
	r.Get("/apis", s.serveAPIGroups)
	r.Get("/api/{version}", func(w http.ResponseWriter, r *http.Request) {
		s.serveResourceList(w, r, schema.GroupVersion{Version: chi.URLParam(r, "version")})
	})
	r.Get("/apis/{group}", func(w http.ResponseWriter, r *http.Request) { s.serveAPIGroup(w, r, chi.URLParam(r, "group")) })
	r.Get("/apis/{group}/{version}", func(w http.ResponseWriter, r *http.Request) {
		s.serveResourceList(w, r, schema.GroupVersion{Group: chi.URLParam(r, "group"), Version: chi.URLParam(r, "version")})
	})
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

// health answers ok while etcd answers.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if _, err := s.store.Revision(ctx); err != nil {
		http.Error(w, "etcd: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("ok"))
}

// Version is what /version reports. kubectl picks its client version from
// the minor, so mkube says it speaks Kubernetes 1.32.
var Version = map[string]string{
	"major": "1", "minor": "32", "gitVersion": "v1.32.0-mkube", "gitCommit": "", "gitTreeState": "clean",
	"buildDate": "2026-11-30T00:00:00Z", "goVersion": "go1.26", "compiler": "gc", "platform": "linux/amd64",
}

func (s *Server) version(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, Version)
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

// logWrite logs a successful write in the seed's terms.
func (s *Server) logWrite(q *request, obj runtime.Object) {
	args := []any{"verb", q.info.Verb, "resource", q.st.res.Name, "object", objectKey(obj), "rv", rvOf(obj)}
	if q.info.Subresource != "" {
		args = append(args, "subresource", q.info.Subresource)
	}
	msg := "stored in etcd"
	if step, what := seedStep(q.info, obj); step != 0 {
		args = append([]any{"step", step}, args...)
		msg = what
	}
	s.log.Info(msg, args...)
}
