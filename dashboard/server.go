package dashboard

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
)

// web holds the page: plain HTML, CSS and one JavaScript file per view,
// embedded so that the binary is all a learner needs (no CDN, no build).
//
//go:embed web
var web embed.FS

// Server is the dashboard: its list-watch client (Watcher), the numbers
// it samples (History), and the HTTP handlers of the page. Run blocks.
type Server struct {
	client  *client.Client
	watcher *Watcher
	hub     *Hub
	history *History
	faults  *Faults
	log     *slog.Logger
}

// Options are what the dashboard samples besides the API server.
type Options struct {
	// SchedulerMetrics and ControllerManagerMetrics are the URLs of the
	// components' /metrics (their secure ports); empty: not configured.
	SchedulerMetrics, ControllerManagerMetrics string
	// ScrapeClient is who the dashboard is to those ports (ScrapeClient);
	// Anonymous says it has no credentials.
	ScrapeClient *http.Client
	Anonymous    bool
	// SampleInterval is how often the numbers are sampled (0:
	// SampleInterval, 15 s).
	SampleInterval time.Duration
}

// New wires a dashboard on c, the API server as the dashboard's identity.
func New(c *client.Client, log *slog.Logger, o Options) *Server {
	hub := NewBroadcast[Change](log, "changes")
	w := NewWatcher(c, hub, clock.RealClock{}, log)
	history := NewHistory(clock.RealClock{}, o.SampleInterval, log, apiSource{client: c, watcher: w},
		NewSchedulerScraper(o.SchedulerMetrics, o.ScrapeClient, o.Anonymous),
		NewControllerManagerScraper(o.ControllerManagerMetrics, o.ScrapeClient, o.Anonymous))
	return &Server{client: c, watcher: w, hub: hub, history: history, faults: &Faults{client: c, watcher: w}, log: log}
}

// Run list-watches, samples and serves the page on ln until ctx ends.
func (s *Server) Run(ctx context.Context, srv *http.Server, serve func() error) error {
	go s.watcher.Run(ctx) // returns when ctx ends
	go func() {
		if s.watcher.WaitForSync(ctx) {
			s.log.Info("informers synced: serving the cluster as listed, and every watch event after", "resources", len(watched))
		}
	}()
	go s.history.Run(ctx) // returns when ctx ends
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown) // open streams end with their requests' contexts
	}()
	if err := serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Handler is the dashboard's HTTP API and page:
//
//	GET  /                                     the page (web/index.html) and its files
//	GET  /api/stream                           server-sent events (sse.go)
//	GET  /api/pods/{namespace}/{name}/steps    the pod's 13 steps (steps.go)
//	GET  /api/pods/{namespace}/{name}/explain  why its node (explain.go)
//	POST /api/faults                           inject a fault (faults.go)
//	GET  /healthz, /readyz
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	files, _ := fs.Sub(web, "web")
	mux.Handle("GET /", http.FileServerFS(files))
	mux.HandleFunc("GET /api/stream", s.serveStream)
	mux.HandleFunc("GET /api/pods/{namespace}/{name}/steps", s.serveSteps)
	mux.HandleFunc("GET /api/pods/{namespace}/{name}/explain", s.serveExplain)
	mux.HandleFunc("POST /api/faults", s.serveFault)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !s.watcher.HasSynced() {
			http.Error(w, "informers not synced", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	})
	return mux
}

// pod reads the pod named by the path from the cache, or answers 404 as
// the API server would.
func (s *Server) pod(w http.ResponseWriter, r *http.Request) (*corev1.Pod, bool) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	obj, ok := s.watcher.Cache(client.Pods).Get(ns + "/" + name)
	if !ok {
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name))
		return nil, false
	}
	return obj.(*corev1.Pod), true
}

// PodSteps is the steps view's answer.
type PodSteps struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
	Steps     []Step `json:"steps"`
}

func (s *Server) serveSteps(w http.ResponseWriter, r *http.Request) {
	pod, ok := s.pod(w, r)
	if !ok {
		return
	}
	writeJSON(w, PodSteps{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID), Steps: s.watcher.Steps(pod)})
}

func (s *Server) serveExplain(w http.ResponseWriter, r *http.Request) {
	pod, ok := s.pod(w, r)
	if !ok {
		return
	}
	var nodes []string
	for _, obj := range s.watcher.Cache(client.Nodes).List() {
		nodes = append(nodes, obj.(*corev1.Node).Name)
	}
	slices.Sort(nodes)
	out, err := s.watcher.Explain(pod, nodes)
	if err != nil {
		writeStatus(w, apierrors.NewInternalError(err))
		return
	}
	writeJSON(w, out)
}

// faultHeader must be on a fault request. A page of another origin can
// send a plain POST to the loopback, but not with a custom header unless
// the dashboard allowed it by CORS, which it never does.
const faultHeader = "X-Mkube-Dashboard"

func (s *Server) serveFault(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(faultHeader) == "" {
		writeStatus(w, apierrors.NewForbidden(schema.GroupResource{Resource: "faults"}, "", errors.New("a fault must come from the dashboard's page (header "+faultHeader+")")))
		return
	}
	var f Fault
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&f); err != nil {
		writeStatus(w, apierrors.NewBadRequest("decode fault: "+err.Error()))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if err := s.faults.Send(ctx, f); err != nil {
		s.log.Info("fault refused", "action", f.Action, "pod", f.Namespace+"/"+f.Pod, "node", f.Node, "err", err)
		writeStatus(w, err)
		return
	}
	s.log.Info("fault injected", "action", f.Action, "pod", f.Namespace+"/"+f.Pod, "node", f.Node)
	writeJSON(w, metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: http.StatusOK})
}

// access asks, for the page, whether the buttons will work.
func (s *Server) access(r *http.Request) Access {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	a := Access{User: s.client.Identity().User}
	allowed, reason, err := s.faults.Allowed(ctx)
	if err != nil {
		a.Reason = err.Error()
		return a
	}
	a.Allowed, a.Reason = allowed, reason
	return a
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// writeStatus answers err as the API server does: a metav1.Status with
// its code.
func writeStatus(w http.ResponseWriter, err error) {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		st = apierrors.NewInternalError(err)
	}
	status := st.Status()
	status.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(status.Code))
	json.NewEncoder(w).Encode(status)
}
