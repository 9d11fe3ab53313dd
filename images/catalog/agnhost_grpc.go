package catalog

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
)

// `agnhost grpc-health-checking` is a gRPC Health service
// (grpc.health.v1.Health) on --port (5000) whose answer a test can
// change: SERVING for its first --delay-unhealthy-sec seconds (-1, the
// default: for ever), then NOT_SERVING; NOT_SERVING at once after a GET
// of /make-not-serving on its HTTP control server, --http-port (8080).
// A GET of /make-serving undoes that, but not the delay. It answers
// only for --service ("" by default: the server as a whole), NotFound
// for any other, and does not implement Watch.

// grpcHealthChecking is the subcommand's process: it logs its two
// listeners with Go's logger and serves until it is stopped. Its state
// lives in grpcHealthStates while it runs.
func grpcHealthChecking(ctx context.Context, p *shell.Process, args []string) (int, error) {
	port, httpPort := lib.IntFlag(args, "port", 5000), lib.IntFlag(args, "http-port", 8080)
	h := newGRPCHealth(args, p.Clock.Now())
	grpcHealthStates.Store(p, h)
	defer grpcHealthStates.Delete(p)
	goLog(p, fmt.Sprintf("Http server starting to listen on :%d", httpPort))
	goLog(p, fmt.Sprintf("gRPC server starting to listen on :%d", port))
	if err := lib.ListenUntilStopped(ctx, p, int32(port), int32(httpPort)); err != nil {
		return 137, err
	}
	return agnhostExitOnSignal, nil
}

// grpcHealthStates holds the state of each running grpc-health-checking
// process, by its *shell.Process: the program stores its own when it
// starts and deletes it when it ends; the servers, which run once per
// connection, find it there, so that /make-not-serving on one
// connection changes what Check answers on the next.
var grpcHealthStates sync.Map

// grpcHealth is the state of one grpc-health-checking process.
type grpcHealth struct {
	started        time.Time // the program's start, on the process's clock
	service        string    // --service: the one service it answers for
	delayUnhealthy int       // --delay-unhealthy-sec; negative: never

	mu         sync.Mutex
	notServing bool // /make-not-serving was called, and /make-serving not since
}

func newGRPCHealth(flags []string, started time.Time) *grpcHealth {
	return &grpcHealth{started: started, service: lib.StringFlag(flags, "service", ""),
		delayUnhealthy: lib.IntFlag(flags, "delay-unhealthy-sec", -1)}
}

// grpcHealthOf is the state of the program running in c, or, if it is
// not running (it has just ended), a fresh one as of c's start.
func grpcHealthOf(c Running, flags []string) *grpcHealth {
	if h, ok := grpcHealthStates.Load(c.Process); ok {
		return h.(*grpcHealth)
	}
	return newGRPCHealth(flags, c.Started)
}

// status is NOT_SERVING once forced so or once the delay has passed.
func (h *grpcHealth) status(now time.Time) healthpb.HealthCheckResponse_ServingStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.notServing || h.delayUnhealthy >= 0 && now.Sub(h.started) >= time.Duration(h.delayUnhealthy)*time.Second {
		return healthpb.HealthCheckResponse_NOT_SERVING
	}
	return healthpb.HealthCheckResponse_SERVING
}

func (h *grpcHealth) setNotServing(v bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notServing = v
}

// grpcHealthServe answers a connection to the gRPC port or to the
// control port.
func grpcHealthServe(c Running, port int32, conn net.Conn, flags []string) {
	h := grpcHealthOf(c, flags)
	switch int(port) {
	case lib.IntFlag(flags, "port", 5000):
		serveGRPC(conn, func(s *grpc.Server) { healthpb.RegisterHealthServer(s, &healthChecker{h: h, p: c.Process}) })
	case lib.IntFlag(flags, "http-port", 8080):
		lib.ServeHTTP(conn, lib.Logged(c.Process, "", h.controlMux(c.Process), nil))
	default:
		conn.Close()
	}
}

// controlMux is the HTTP control server: each endpoint logs what it
// does and answers for how long the program has run.
func (h *grpcHealth) controlMux(p *shell.Process) http.Handler {
	mux := http.NewServeMux()
	mark := func(notServing bool, msg string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			goLog(p, msg)
			h.setNotServing(notServing)
			io.WriteString(w, p.Clock.Since(h.started).String())
		}
	}
	mux.HandleFunc("/make-not-serving", mark(true, "Mark as unhealthy"))
	mux.HandleFunc("/make-serving", mark(false, "Mark as healthy"))
	return mux
}

// healthChecker is agnhost's own implementation of the Health service
// (not grpc-go's health.Server), which logs each Check.
type healthChecker struct {
	healthpb.UnimplementedHealthServer
	h *grpcHealth
	p *shell.Process
}

func (s *healthChecker) Check(_ context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	// Round(0) drops the monotonic reading, which would be the node's
	// process's uptime, not the container's.
	goLog(s.p, fmt.Sprintf("Serving the Check request for health check, started at %v", s.h.started.Round(0)))
	if req.GetService() != s.h.service {
		return nil, status.Error(codes.NotFound, "unknown service")
	}
	return &healthpb.HealthCheckResponse{Status: s.h.status(s.p.Clock.Now())}, nil
}

func (s *healthChecker) Watch(*healthpb.HealthCheckRequest, healthpb.Health_WatchServer) error {
	return status.Error(codes.Unimplemented, "unimplemented")
}
