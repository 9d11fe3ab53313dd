package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
)

// etcdVersion is the etcd of registry.k8s.io/etcd:3.5.1-0, the image of
// the Kubernetes docs' gRPC liveness probe example.
const etcdVersion = "3.5.1"

// etcdImage is registry.k8s.io/etcd, the etcd Kubernetes builds for its
// control planes: the etcd binaries under /usr/local/bin on distroless,
// with no ENTRYPOINT or CMD, so a pod names the command
// (/usr/local/bin/etcd ...), as kubeadm's static pod does.
//
// Its etcd is an etcd as a client on the pod network sees it: it logs
// what a single-member etcd logs when it starts and stops, listens on
// the ports of its --listen-client-urls and --listen-peer-urls, and
// serves on a client port what etcd does there besides its KV API: the
// gRPC Health service (grpc.health.v1.Health, SERVING, which a grpc
// probe checks) and, over HTTP/1.1 on the same port, /health and
// /version. It stores no keys: its KV, Watch and Lease APIs are not
// simulated (a call to them is gRPC's Unimplemented), nor is TLS, and
// the pod network does not tell a loopback-only URL from 0.0.0.0.
func etcdImage() Image {
	return Image{
		Env:      []string{"PATH=" + stdPath},
		Ports:    []int32{2379, 2380, 4001, 7001},
		Programs: map[string]shell.Program{"etcd": etcd},
		Serve:    etcdServe,
	}
}

// etcdConfig is what etcd's flags set, with etcd's defaults.
type etcdConfig struct {
	name, dataDir                 string
	listenClient, advertiseClient []string
	listenPeer, advertisePeer     []string
}

func parseEtcdFlags(args []string) etcdConfig {
	// etcd parses flags with Go's flag package: -name works as --name.
	flags := make([]string, len(args))
	for i, a := range args {
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") {
			a = "-" + a
		}
		flags[i] = a
	}
	urls := func(name, def string) []string { return strings.Split(lib.StringFlag(flags, name, def), ",") }
	name := lib.StringFlag(flags, "name", "default")
	return etcdConfig{
		name:            name,
		dataDir:         path.Join("/", lib.StringFlag(flags, "data-dir", name+".etcd")),
		listenClient:    urls("listen-client-urls", "http://localhost:2379"),
		advertiseClient: urls("advertise-client-urls", "http://localhost:2379"),
		listenPeer:      urls("listen-peer-urls", "http://localhost:2380"),
		advertisePeer:   urls("initial-advertise-peer-urls", "http://localhost:2380"),
	}
}

// ports are the ports of urls, which name the listeners.
func ports(urls []string) []int32 {
	var out []int32
	for _, u := range urls {
		parsed, err := url.Parse(u)
		if err != nil {
			continue
		}
		if n, err := strconv.Atoi(parsed.Port()); err == nil && !slices.Contains(out, int32(n)) {
			out = append(out, int32(n))
		}
	}
	return out
}

// The IDs of the single-member cluster etcd makes of its defaults (its
// member ID is a hash of its name and peer URLs); mkube keeps them.
const (
	etcdMemberID  = "8e9e05c52164694d"
	etcdClusterID = "cdf818194e3a8c32"
)

// etcd logs zap's JSON lines on stderr, in UTC, as etcd 3.5 does. On
// SIGTERM it closes its server and, being PID 1, exits 0 (its interrupt
// handler's os.Exit(0): the kernel would not kill PID 1 for it).
func etcd(ctx context.Context, p *shell.Process, args []string, _ io.Writer) (int, error) {
	cfg := parseEtcdFlags(args)
	log := func(caller, msg string, fields ...any) { etcdLog(p, "info", caller, "", msg, fields...) }
	raft := func(msg string) { etcdLog(p, "info", "etcdserver/zap_raft.go:77", "raft", msg) }
	initialized, _ := p.FS.Stat(path.Join(cfg.dataDir, "member"))

	// os.Args: the image's etcd is /usr/local/bin/etcd.
	log("etcdmain/etcd.go:73", "Running: ", "args", append([]string{"/usr/local/bin/etcd"}, args...))
	log("embed/etcd.go:131", "configuring peer listeners", "listen-peer-urls", cfg.listenPeer)
	log("embed/etcd.go:139", "configuring client listeners", "listen-client-urls", cfg.listenClient)
	log("embed/etcd.go:307", "starting an etcd server", "etcd-version", etcdVersion, "git-sha", "e8732fb5f",
		"go-version", "go1.16.3", "go-os", "linux", "go-arch", "amd64", "member-initialized", initialized,
		"name", cfg.name, "data-dir", cfg.dataDir, "initial-cluster", cfg.name+"="+cfg.advertisePeer[0])
	p.FS.WriteFile(path.Join(cfg.dataDir, "member/snap/db"), nil)
	p.FS.WriteFile(path.Join(cfg.dataDir, "member/wal/0000000000000000-0000000000000000.wal"), nil)
	log("etcdserver/backend.go:81", "opened backend db", "path", path.Join(cfg.dataDir, "member/snap/db"), "took", "1.412ms")
	raft(etcdMemberID + " became leader at term 2")
	log("etcdserver/server.go:2027", "published local member to cluster through raft",
		"local-member-id", etcdMemberID,
		"local-member-attributes", fmt.Sprintf("{Name:%s ClientURLs:[%s]}", cfg.name, strings.Join(cfg.advertiseClient, " ")),
		"request-path", "/0/members/"+etcdMemberID+"/attributes", "cluster-id", etcdClusterID, "publish-timeout", "7s")
	log("embed/serve.go:98", "ready to serve client requests")
	for _, port := range ports(cfg.listenClient) {
		log("embed/serve.go:140", "serving client traffic insecurely; this is strongly discouraged!",
			"address", fmt.Sprintf("[::]:%d", port))
	}
	if err := lib.ListenUntilStopped(ctx, p, append(ports(cfg.listenClient), ports(cfg.listenPeer)...)...); err != nil {
		return 137, err
	}
	closing := []any{"name", cfg.name, "data-dir", cfg.dataDir,
		"advertise-peer-urls", cfg.advertisePeer, "advertise-client-urls", cfg.advertiseClient}
	log("osutil/interrupt_unix.go:64", "received signal; shutting down", "signal", "terminated")
	log("embed/etcd.go:367", "closing etcd server", closing...)
	log("etcdserver/server.go:1438", "skipped leadership transfer for single voting member cluster",
		"local-member-id", etcdMemberID, "current-leader-member-id", etcdMemberID)
	log("embed/etcd.go:369", "closed etcd server", closing...)
	return 0, nil
}

// etcdLog writes one of zap's JSON lines, its fields in order:
// {"level":"info","ts":"2026-12-01T11:00:00.000Z","caller":"...","msg":"..."}.
func etcdLog(p *shell.Process, level, caller, logger, msg string, fields ...any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // zap writes < > & as they are
	field := func(k string, v any) {
		fmt.Fprintf(&b, ",%q:", k)
		enc.Encode(v)
		b.Truncate(b.Len() - 1) // Encode's newline
	}
	fmt.Fprintf(&b, `{"level":%q,"ts":%q`, level, p.Clock.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00"))
	if logger != "" {
		field("logger", logger)
	}
	field("caller", caller)
	field("msg", msg)
	for i := 0; i+1 < len(fields); i += 2 {
		field(fields[i].(string), fields[i+1])
	}
	b.WriteString("}\n")
	p.Stderr.Write(b.Bytes())
}

// etcdServe answers a connection as etcd does on its ports. A client
// port (cmux, in etcd) speaks gRPC to an HTTP/2 client and HTTP/1.1 to
// the others; a peer port (raft's own HTTP) is only held open.
func etcdServe(c Running, port int32, conn net.Conn) {
	args, _ := splitCommand(c.Argv, "etcd")
	if !slices.Contains(ports(parseEtcdFlags(args).listenClient), port) {
		holdTCP(c, port, conn)
		return
	}
	conn, http2, ok := isHTTP2(conn)
	switch {
	case !ok:
		conn.Close()
	case http2:
		serveGRPC(conn, func(s *grpc.Server) {
			// etcd's v3rpc registers grpc-go's health server, which
			// answers SERVING for "" (the server as a whole) and
			// NotFound for any other service.
			healthpb.RegisterHealthServer(s, health.NewServer())
		})
	default:
		lib.ServeHTTP(conn, lib.Logged(c.Process, "", etcdHTTP(), nil))
	}
}

// etcdHTTP is what etcd answers over HTTP/1.1 on a client port, as far
// as mkube simulates it: /health and /version, as `curl` shows them.
func etcdHTTP() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, `{"health":"true","reason":""}`)
	})
	mux.HandleFunc("/version", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"etcdserver":"`+etcdVersion+`","etcdcluster":"3.5.0"}`)
	})
	return mux
}
