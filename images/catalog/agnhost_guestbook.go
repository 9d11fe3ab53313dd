package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
)

// `agnhost guestbook` is the guestbook of Kubernetes' kubectl tests, in
// three Deployments of one image: a primary store, replicas that
// register with it (--replicaof agnhost-primary), and a frontend whose
// /guestbook?cmd=set goes to the Service agnhost-primary and cmd=get to
// agnhost-replica, each on --backend-port (6379). Every tier serves
// /get, /set (which a primary pushes on to its registered replicas) and
// /register on --http-port (80). The store lives as long as the
// container.

const (
	guestbookRegisterTimeout = 15 * time.Second // how long a replica tries to register
	guestbookRetryInterval   = time.Second
)

// guestbookStates holds each running guestbook's store by its process,
// as nettestStates does: the server runs once per connection.
var guestbookStates sync.Map

type guestbookState struct {
	backendPort string

	mu       sync.Mutex
	store    map[string]any
	replicas []string // the IPs of the replicas registered with this one
}

func guestbook(ctx context.Context, p *shell.Process, args []string) (int, error) {
	port, err := strconv.Atoi(lib.StringFlag(args, "http-port", "80"))
	if err != nil || port < 1 || port > 65535 {
		goLog(p, fmt.Sprintf("listen tcp: address %s: invalid port", lib.StringFlag(args, "http-port", "80"))) // its log.Fatal
		return 1, nil
	}
	st := &guestbookState{backendPort: lib.StringFlag(args, "backend-port", "6379"), store: map[string]any{}}
	guestbookStates.Store(p, st)
	defer guestbookStates.Delete(p)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	failed := make(chan struct{}) // closed if a replica gives up registering
	if primary := lib.StringFlag(args, "replicaof", ""); primary != "" {
		go func() {
			if !st.register(ctx, p, primary) {
				close(failed)
				stop()
			}
		}()
	}
	err = lib.ListenUntilStopped(ctx, p, int32(port))
	select {
	case <-failed:
		return 1, nil // log.Fatal
	default:
	}
	if err != nil {
		return 137, err
	}
	return agnhostExitOnSignal, nil
}

// register is a replica's registerNode: it asks the primary for its
// store, giving the IP it reaches the primary from, so that the primary
// pushes its next sets to it. It retries for guestbookRegisterTimeout;
// false is the real one's log.Fatal.
func (st *guestbookState) register(ctx context.Context, p *shell.Process, primary string) bool {
	hostPort := net.JoinHostPort(primary, st.backendPort)
	for start := p.Clock.Now(); p.Clock.Since(start) < guestbookRegisterTimeout; {
		err := st.registerOnce(ctx, p, hostPort)
		if err == nil {
			goLog(p, "Registered to node: "+primary)
			return true
		}
		goLog(p, fmt.Sprintf("%v. Retrying in %s.", err, guestbookRetryInterval))
		select {
		case <-ctx.Done():
			return true // stopped: not a failure to register
		case <-p.Clock.After(guestbookRetryInterval):
		}
	}
	goLog(p, "Timed out while registering to primary.")
	return false
}

func (st *guestbookState) registerOnce(ctx context.Context, p *shell.Process, hostPort string) error {
	// Its getIP: the source address of a UDP socket to the primary.
	conn, err := p.Connect(ctx, "udp", hostPort)
	if err != nil {
		return fmt.Errorf("unable to get IP %s: %v", hostPort, err)
	}
	ip := conn.LocalAddr().(*net.UDPAddr).IP
	conn.Close()
	request := "register?host=" + ip.String()
	goLog(p, fmt.Sprintf("Registering to primary: %s/%s", hostPort, request))
	response, err := dialHTTP(ctx, Running{Process: p}, hostPort, request)
	if err != nil {
		return fmt.Errorf("encountered error while registering to primary: %v", err)
	}
	var answer struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal([]byte(response), &answer); err != nil {
		return fmt.Errorf("encountered error while registering to primary: %v", err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.store = answer.Data
	if st.store == nil {
		st.store = map[string]any{}
	}
	return nil
}

// guestbookOf is the state of the guestbook running in c, or an empty
// one if it has just ended.
func guestbookOf(c Running) *guestbookState {
	if st, ok := guestbookStates.Load(c.Process); ok {
		return st.(*guestbookState)
	}
	return &guestbookState{backendPort: "6379", store: map[string]any{}}
}

func (st *guestbookState) mux(c Running) http.Handler {
	p := c.Process
	writeJSON := func(w http.ResponseWriter, v any) {
		b, _ := json.Marshal(v)
		w.Write(b)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		ip := r.URL.Query().Get("host")
		goLog(p, "GET /register?host="+ip)
		st.mu.Lock()
		writeJSON(w, map[string]any{"data": st.store})
		st.replicas = append(st.replicas, ip)
		st.mu.Unlock()
		goLog(p, fmt.Sprintf("Node '%s' registered.", ip))
	})
	mux.HandleFunc("/get", func(w http.ResponseWriter, r *http.Request) {
		key := r.URL.Query().Get("key")
		goLog(p, "GET /get?key="+key)
		st.mu.Lock()
		defer st.mu.Unlock()
		if key == "" {
			writeJSON(w, map[string]any{"data": st.store})
			return
		}
		value, found := st.store[key]
		if !found {
			value = ""
		}
		writeJSON(w, map[string]any{"data": value})
	})
	mux.HandleFunc("/set", func(w http.ResponseWriter, r *http.Request) {
		key, value := r.URL.Query().Get("key"), r.URL.Query().Get("value")
		goLog(p, fmt.Sprintf("GET /set?key=%s&value=%s", key, value))
		if key == "" {
			http.Error(w, "cannot set with empty key.", http.StatusBadRequest)
			return
		}
		st.mu.Lock()
		st.store[key] = value
		replicas := append([]string(nil), st.replicas...)
		st.mu.Unlock()
		request := fmt.Sprintf("set?key=%s&value=%s", key, value)
		for _, replica := range replicas {
			if _, err := dialHTTP(r.Context(), c, net.JoinHostPort(replica, st.backendPort), request); err != nil {
				http.Error(w, fmt.Sprintf("encountered error while propagating to replica '%s': %v", replica, err), http.StatusExpectationFailed)
				return
			}
		}
		writeJSON(w, map[string]string{"message": "Updated"})
	})
	mux.HandleFunc("/guestbook", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		cmd, key, value := strings.ToLower(q.Get("cmd")), q.Get("key"), q.Get("value")
		goLog(p, fmt.Sprintf("GET /guestbook?cmd=%s&key=%s&value=%s", cmd, key, value))
		switch {
		case cmd != "get" && cmd != "set":
			http.Error(w, fmt.Sprintf("unsupported cmd: '%s'", cmd), http.StatusBadRequest)
			return
		case cmd == "set" && key == "":
			http.Error(w, "cannot set with empty key.", http.StatusBadRequest)
			return
		}
		host := "agnhost-primary"
		if cmd == "get" {
			host = "agnhost-replica"
		}
		response, err := dialHTTP(r.Context(), c, net.JoinHostPort(host, st.backendPort), fmt.Sprintf("%s?key=%s&value=%s", cmd, key, value))
		if err != nil {
			http.Error(w, fmt.Sprintf("encountered error: %v", err), http.StatusExpectationFailed)
			return
		}
		fmt.Fprint(w, response)
	})
	return mux
}
