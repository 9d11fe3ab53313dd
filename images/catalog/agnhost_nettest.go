package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
)

// `agnhost nettest` is a tiny web server on --port (8080) that other
// test pods write to: POST /write {"Source": "prestop"} counts a contact
// from that source, GET /read answers the whole state as indented JSON,
// /status "pass", "running" or "fail", /quit ends it (exit 0).
// Kubernetes' PreStop conformance spec has a preStop hook `wget
// --post-data` to /write and reads /read through the API server's pod
// proxy.
//
// Beside it, the real one finds its peers, the endpoints of --service,
// through the API server at its ClusterIP (in-cluster config). Where
// that address reaches the API server (the kubelets' Service rules), the
// program says what of that search is not simulated and goes on serving;
// where it does not, each try fails ("no route to host", as on a cluster
// without a Service proxy), and after five minutes the program gives up
// with log.Fatalf (exit 1), as the real one does.

const (
	nettestRetryInterval = 6 * time.Second // its 5 s sleepTime and the 1 s sleep after a failure
	nettestTimeout       = 5 * time.Minute
	inClusterTokenFile   = "/var/run/secrets/kubernetes.io/serviceaccount/token"
)

// nettestStates holds each running nettest's state by its process, as
// grpcHealthStates does: the server runs once per connection.
var nettestStates sync.Map

// nettestState is what /read answers, field for field the real State.
type nettestState struct {
	Hostname             string
	Sent                 map[string]int
	Received             map[string]int
	Errors               []string
	Log                  []string
	StillContactingPeers bool

	mu        sync.Mutex
	peerCount int
	quit      func() // /quit
}

func nettest(ctx context.Context, p *shell.Process, args []string) (int, error) {
	if lib.StringFlag(args, "service", "nettest") == "" {
		goLog(p, "Must provide -service flag.")
		return 1, nil
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var exit struct {
		sync.Mutex
		code int
		set  bool
	}
	end := func(code int) {
		exit.Lock()
		if !exit.set {
			exit.code, exit.set = code, true
		}
		exit.Unlock()
		stop()
	}
	st := &nettestState{Hostname: p.Hostname, StillContactingPeers: true,
		peerCount: lib.IntFlag(args, "peers", 8), quit: func() { end(0) }}
	nettestStates.Store(p, st)
	defer nettestStates.Delete(p)
	go func() {
		if !st.contactOthers(ctx, p) {
			end(1) // log.Fatalf
		}
	}()
	err := lib.ListenUntilStopped(ctx, p, int32(lib.IntFlag(args, "port", 8080)))
	exit.Lock()
	defer exit.Unlock()
	switch {
	case exit.set:
		return exit.code, nil
	case err != nil:
		return 137, err
	}
	return agnhostExitOnSignal, nil
}

// contactOthers is the real one's search for its peers, up to where it
// needs the API server; false is a log.Fatalf.
func (s *nettestState) contactOthers(ctx context.Context, p *shell.Process) bool {
	defer s.doneContactingPeers()
	host, port := p.Getenv("KUBERNETES_SERVICE_HOST"), p.Getenv("KUBERNETES_SERVICE_PORT")
	if _, err := p.FS.ReadFile(inClusterTokenFile); host == "" || port == "" || err != nil {
		msg := "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined"
		if host != "" && port != "" {
			msg = "open " + inClusterTokenFile + ": no such file or directory"
		}
		goLog(p, "Unable to create config; error: "+msg)
		return false
	}
	address := net.JoinHostPort(host, port)
	var err error
	for start := p.Clock.Now(); p.Clock.Since(start) < nettestTimeout; {
		var conn net.Conn
		dctx, cancel := clockTimeout(ctx, p, 30*time.Second) // client-go's dial timeout
		if conn, err = p.Connect(dctx, "tcp", address); err == nil {
			conn.Close()
		}
		cancel()
		if ctx.Err() != nil {
			return true
		}
		if err == nil {
			// A Service proxy answered: what comes next (the version, the
			// service's endpoints, a POST to each peer) is not simulated.
			goLog(p, "mkube does not simulate nettest's peer discovery beyond reaching the API server at "+address)
			return true
		}
		err = fmt.Errorf("Get \"https://%s/version?timeout=32s\": %w", address, err)
		goLog(p, fmt.Sprintf("Unable to get server version: %v; retrying.", err))
		select {
		case <-ctx.Done():
			return true
		case <-p.Clock.After(nettestRetryInterval):
		}
	}
	goLog(p, fmt.Sprintf("Unable to contact Kubernetes: %v", err))
	return false
}

func (s *nettestState) doneContactingPeers() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.StillContactingPeers = false
}

// nettestOf is the state of the nettest running in c, or a fresh one
// if it has just ended.
func nettestOf(c Running) *nettestState {
	if st, ok := nettestStates.Load(c.Process); ok {
		return st.(*nettestState)
	}
	return &nettestState{Hostname: c.Process.Hostname, quit: func() {}}
}

func (s *nettestState) mux() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/quit", func(w http.ResponseWriter, r *http.Request) { s.quit() })
	mux.HandleFunc("/read", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		b, err := json.MarshalIndent(s, "", "\t")
		s.appendErr(err)
		w.Write(b)
	})
	mux.HandleFunc("/write", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		var post struct{ Source, Dest string }
		s.appendErr(json.NewDecoder(r.Body).Decode(&post))
		if post.Source == "" {
			s.appendErr(fmt.Errorf("%v: Got request with no source", s.Hostname))
		} else {
			if s.Received == nil {
				s.Received = map[string]int{}
			}
			s.Received[post.Source]++
		}
		s.appendErr(json.NewEncoder(w).Encode(struct{ Hostname string }{s.Hostname}))
	})
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		switch {
		case len(s.Sent) >= s.peerCount && len(s.Received) >= s.peerCount:
			fmt.Fprint(w, "pass")
		case s.StillContactingPeers:
			fmt.Fprint(w, "running")
		default:
			fmt.Fprint(w, "fail")
		}
	})
	return mux
}

// appendErr records err; s.mu is held.
func (s *nettestState) appendErr(err error) {
	if err != nil {
		s.Errors = append(s.Errors, err.Error())
	}
}

// clockTimeout is ctx, cancelled after d of the process's clock.
func clockTimeout(ctx context.Context, p *shell.Process, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	timer := p.Clock.NewTimer(d)
	go func() {
		defer timer.Stop()
		select {
		case <-timer.C():
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
