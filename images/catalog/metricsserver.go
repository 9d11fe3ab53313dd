package catalog

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
	"github.com/mkube/mkube/metricsserver"
)

// metricsServerImage is registry.k8s.io/metrics-server/metrics-server,
// sigs.k8s.io/metrics-server's image: the one binary /metrics-server on
// distroless (ENTRYPOINT ["/metrics-server"], no CMD, no shell). Its
// program is mkube's metrics server, package metricsserver, as
// addons/metrics-server.yaml deploys it.
func metricsServerImage() Image {
	return Image{
		Entrypoint: []string{"/metrics-server"},
		Programs:   map[string]shell.Program{"metrics-server": metricsServerMain},
		Serve:      serveMetricsServer,
	}
}

// metricsServerInstance is one container's server and its serving pair.
type metricsServerInstance struct {
	srv  *metricsserver.Server
	cert tls.Certificate
}

// metricsServers holds each running metrics server by its process: the
// program runs once per container, Serve once per connection.
var metricsServers sync.Map

// metricsServerMain is /metrics-server: flags, the in-cluster
// configuration of the pod (its service account, through its network),
// then scraping and serving on --secure-port until SIGTERM. A failure to
// start is logged as cli.Run logs it, exit 1.
func metricsServerMain(ctx context.Context, p *shell.Process, args []string, _ io.Writer) (int, error) {
	log := slog.New(slog.NewTextHandler(p.Stderr, nil))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ms, port, err := startMetricsServer(ctx, p, args, log)
	if err != nil {
		log.Error("command failed", "err", err)
		return 1, nil
	}
	metricsServers.Store(p, ms)
	defer metricsServers.Delete(p)
	go ms.srv.Run(ctx)
	log.Info("Serving securely on [::]:" + strconv.Itoa(port))
	if err := lib.ListenUntilStopped(ctx, p, int32(port)); err != nil {
		return 137, err
	}
	return 0, nil
}

// startMetricsServer is the path to serving: the options, the clients,
// the authentication configuration, the serving pair.
func startMetricsServer(ctx context.Context, p *shell.Process, args []string, log *slog.Logger) (*metricsServerInstance, int, error) {
	opts, err := metricsserver.ParseFlags(args)
	if err != nil {
		return nil, 0, err
	}
	cfg, err := podRESTConfig(p)
	if err != nil {
		return nil, 0, err
	}
	api, err := client.ForConfig(cfg, "metrics-server")
	if err != nil {
		return nil, 0, err
	}
	kubelets, err := metricsserver.KubeletClient(cfg, opts)
	if err != nil {
		return nil, 0, err
	}
	srv, err := metricsserver.New(ctx, metricsserver.Config{Options: opts, API: api, Kubelets: kubelets, Clock: p.Clock, Log: log})
	if err != nil {
		return nil, 0, err
	}
	cert, err := metricsserver.ServingCert(opts, p.FS.ReadFile)
	if err != nil {
		return nil, 0, err
	}
	return &metricsServerInstance{srv: srv, cert: cert}, opts.SecurePort, nil
}

// podRESTConfig is client-go's rest.InClusterConfig read from the
// container's files and environment, dialing through the pod's network.
func podRESTConfig(p *shell.Process) (*rest.Config, error) {
	host, port := p.Getenv("KUBERNETES_SERVICE_HOST"), p.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, rest.ErrNotInCluster
	}
	token, err := p.FS.ReadFile(lib.ServiceAccountDir + "/token")
	if err != nil {
		return nil, err
	}
	ca, err := p.FS.ReadFile(lib.ServiceAccountDir + "/ca.crt")
	if err != nil {
		return nil, err
	}
	return &rest.Config{Host: "https://" + net.JoinHostPort(host, port), BearerToken: strings.TrimSpace(string(token)),
		TLSClientConfig: rest.TLSClientConfig{CAData: ca},
		Dial:            p.Connect}, nil
}

// serveMetricsServer answers one connection to the secure port: TLS with
// the serving pair, asking for (not requiring) a client certificate,
// then the server's handler for that connection's certificates.
func serveMetricsServer(c Running, _ int32, conn net.Conn) {
	v, ok := metricsServers.Load(c.Process)
	if !ok {
		conn.Close()
		return
	}
	ms := v.(*metricsServerInstance)
	tlsConn, peers, ok := lib.AcceptTLS(conn, ms.cert)
	if !ok {
		return
	}
	lib.ServeHTTP(tlsConn, ms.srv.Handler(peers))
}
