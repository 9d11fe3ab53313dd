// Command apiserver runs mkube's API server with an embedded etcd (or an
// external etcd cluster given by --etcd-servers).
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/admission"
	admissionpolicy "github.com/mkube/mkube/apiserver/admission/policy"
	"github.com/mkube/mkube/apiserver/admission/webhook"
	"github.com/mkube/mkube/apiserver/authorization"
	"github.com/mkube/mkube/apiserver/authorization/node"
	rbacauthz "github.com/mkube/mkube/apiserver/authorization/rbac"
	"github.com/mkube/mkube/apiserver/customresource"
	"github.com/mkube/mkube/apiserver/pki"
	"github.com/mkube/mkube/apiserver/registry"
	"github.com/mkube/mkube/apiserver/registry/admissionregistration"
	"github.com/mkube/mkube/apiserver/registry/apiregistration"
	"github.com/mkube/mkube/apiserver/registry/core"
	"github.com/mkube/mkube/apiserver/registry/discovery"
	"github.com/mkube/mkube/apiserver/registry/rbac"
	"github.com/mkube/mkube/internal/logging"
	"github.com/mkube/mkube/store"
)

func main() {
	port := flag.Int("port", 8080, "the learner's port: plain HTTP, no authentication (0 disables)")
	securePort := flag.Int("secure-port", 6443, "port to serve the Kubernetes API on over HTTPS (HTTP/2), as kube-apiserver (0 disables)")
	advertise := flag.String("advertise-address", "", "the address the default/kubernetes Service's Endpoints give for this API server (default: the host's first non-loopback IPv4)")
	certDir := flag.String("cert-dir", "", "where the CA, the serving and client certificates and admin.kubeconfig are kept (default DATA-DIR/pki)")
	bind := flag.String("bind-address", "0.0.0.0", "address the secure port listens on")
	insecureBind := flag.String("insecure-bind-address", "127.0.0.1", "address the plain port listens on: this host only, as kube-apiserver's old insecure port, unless you say otherwise (0.0.0.0 in docker compose, for the host's port mapping)")
	dataDir := flag.String("data-dir", "mkube-data", "directory of the embedded etcd")
	etcdServers := flag.String("etcd-servers", "", "comma-separated URLs of an external etcd cluster; empty runs etcd embedded")
	etcdClientURL := flag.String("etcd-client-url", "", "also serve the embedded etcd here (e.g. http://127.0.0.1:2379), for etcdctl")
	compaction := flag.Duration("compaction-interval", 5*time.Minute, "how often etcd history is compacted (0 disables)")
	watchCache := flag.Int("watch-cache-size", 4096, "recent events kept per resource for watchers")
	profiling := flag.Bool("profiling", true, "serve Go profiles at /debug/pprof/")
	logLevel := flag.String("log-level", "info", "debug, info, warn or error")
	enableAdmission := flag.String("enable-admission-plugins", "", "admission plugins to enable besides the default ones (comma-separated); mkube has "+strings.Join(admission.Names(admission.Plugins), ", "))
	disableAdmission := flag.String("disable-admission-plugins", "", "admission plugins to disable, though on by default (comma-separated)")
	authzModes := flag.String("authorization-mode", authorization.DefaultModes, "who may do what, after system:masters, which may do anything: Node (kubelets: what their own pods use), RBAC, AlwaysAllow, in order (comma-separated)")
	endpoint := flag.String("control-plane-endpoint", "", "HOST:PORT of this API server in the components' kubeconfigs, as kubeadm's flag (default 127.0.0.1:SECURE-PORT; apiserver:6443 in docker compose)")
	kubeconfigDir := flag.String("kubeconfig-dir", "", "where the components' kubeconfigs (controller-manager, scheduler, kubelet-fleet, kubelet-NODE) and ca.crt are written (default CERT-DIR); apart from it, they can be handed out without the CA's key")
	nodeKubeconfigs := flag.String("node-kubeconfigs", "", "nodes (comma-separated) to sign a kubelet certificate for, system:node:NAME in system:nodes, and write kubelet-NAME.kubeconfig, as kubeadm writes each node's kubelet.conf")
	authn := registerAuthnFlags()
	flag.Parse()

	log := logging.New("apiserver", *logLevel)
	chain, err := admission.NewChain(admission.ParseList(*enableAdmission), admission.ParseList(*disableAdmission))
	if err != nil {
		log.Error("admission", "err", err)
		os.Exit(1)
	}
	modes, err := authorization.ParseModes(*authzModes)
	if err != nil {
		log.Error("authorization", "err", err)
		os.Exit(1)
	}
	policy, graph := rbacauthz.NewPolicy(), node.NewGraph()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	if *certDir == "" {
		*certDir = filepath.Join(*dataDir, "pki")
	}

	// Listen first: a port in use stops the start at once, saying so.
	var servers []*http.Server
	var listeners []net.Listener
	if *port != 0 {
		ln, err := net.Listen("tcp", net.JoinHostPort(*insecureBind, strconv.Itoa(*port)))
		if err != nil {
			log.Error("listen", "err", err)
			os.Exit(1)
		}
		listeners = append(listeners, ln)
		servers = append(servers, &http.Server{ReadHeaderTimeout: 10 * time.Second})
		log.Warn("the plain port serves anyone without authentication, as kube-apiserver's old insecure port did: for curl and learners", "addr", ln.Addr().String())
	}
	kubeconfig := ""
	var clientCA *x509.Certificate // trusted for client certificates: the secure port's
	var frontProxy *pki.PKI        // the front proxy's CA and certificate, with the secure port's PKI
	if *securePort != 0 {
		tlsConfig, path, p, err := secureServing(*certDir, *bind, *securePort)
		if err != nil {
			log.Error("certificates", "err", err)
			os.Exit(1)
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(*bind, strconv.Itoa(*securePort)))
		if err != nil {
			log.Error("listen", "err", err)
			os.Exit(1)
		}
		if err := writeComponentKubeconfigs(p, *kubeconfigDir, *endpoint, *securePort, *nodeKubeconfigs); err != nil {
			log.Error("kubeconfigs", "err", err)
			os.Exit(1)
		}
		kubeconfig, clientCA, frontProxy = path, p.CA, p
		listeners = append(listeners, tls.NewListener(ln, tlsConfig))
		servers = append(servers, &http.Server{ReadHeaderTimeout: 10 * time.Second, TLSConfig: tlsConfig})
	}
	if len(servers) == 0 {
		log.Error("nothing to serve: --port and --secure-port are both 0")
		os.Exit(1)
	}

	authenticator, saTokens, err := authn.build(*certDir, clientCA, log)
	if err != nil {
		log.Error("authentication", "err", err)
		os.Exit(1)
	}
	auditLog, err := authn.openAudit(log)
	if err != nil {
		log.Error("audit", "err", err)
		os.Exit(1)
	}
	if auditLog != nil {
		defer auditLog.Close() // after the servers' Shutdown: the last requests are written
	}

	client, closeEtcd, err := connectEtcd(*etcdServers, *dataDir, *etcdClientURL)
	if err != nil {
		log.Error("etcd", "err", err)
		os.Exit(1)
	}
	defer closeEtcd()
	st := store.New(client)
	// The cluster's admission webhooks and policies, fed below from the
	// server's own watch cache.
	hooks, policies, mutating := webhook.New(log), admissionpolicy.New(log), admissionpolicy.NewMutator(log)
	agg, err := newAggregator(frontProxy, log)
	if err != nil {
		log.Error("aggregator", "err", err)
		os.Exit(1)
	}
	srv := apiserver.New(apiserver.Config{Store: st, Registry: registry.New(), Admission: chain, Webhooks: hooks, Policies: policies,
		MutatingPolicies: mutating, Authenticator: authenticator, ServiceAccountTokens: saTokens, Audit: auditLog,
		Authorizer: authorization.Chain(modes, policy, nodeMode(graph)), Aggregated: agg, Log: log, WatchCacheSize: *watchCache, Profiling: *profiling})
	if err := srv.Start(ctx); err != nil {
		log.Error("start", "err", err)
		os.Exit(1)
	}
	if err := followAdmission(ctx, srv, hooks, policies, mutating); err != nil {
		log.Error("start admission webhooks and policies", "err", err)
		os.Exit(1)
	}
	if err := rbac.Start(ctx, srv, policy, log); err != nil {
		log.Error("start RBAC", "err", err)
		os.Exit(1)
	}
	if err := followNodeGraph(ctx, srv, graph); err != nil {
		log.Error("start the Node authorizer", "err", err)
		os.Exit(1)
	}
	if err := customresource.NewController(srv, clock.RealClock{}, log).Start(ctx); err != nil {
		log.Error("start serving custom resources", "err", err)
		os.Exit(1)
	}
	if err := agg.Start(ctx, srv); err != nil {
		log.Error("start the aggregator", "err", err)
		os.Exit(1)
	}
	if err := apiregistration.NewController(srv, registry.Resources, agg, clock.RealClock{}, log).Start(ctx); err != nil {
		log.Error("start the APIService controllers", "err", err)
		os.Exit(1)
	}
	if err := publishAuthentication(ctx, srv, clientCA, frontProxy); err != nil {
		log.Error("start", "err", err)
		os.Exit(1)
	}
	go st.RunCompactor(ctx, *compaction, log, srv.Compacted)
	if *securePort != 0 {
		ip, err := advertiseAddress(*advertise)
		if err != nil {
			log.Error("advertise address", "err", err)
			os.Exit(1)
		}
		k := &core.KubernetesService{Services: srv.StorageFor(core.Services.GroupVersionResource()),
			Endpoints:      srv.StorageFor(core.Endpoints.GroupVersionResource()),
			EndpointSlices: srv.StorageFor(discovery.EndpointSlices.GroupVersionResource()), IP: ip, Port: int32(*securePort),
			Clock: clock.RealClock{}, Log: log}
		go k.Run(ctx) // returns when ctx ends
	}
	if err := core.CreateClusterDNSService(ctx, srv.StorageFor(core.Services.GroupVersionResource()), log); err != nil {
		log.Error("create the cluster DNS Service", "err", err)
		os.Exit(1)
	}

	addrs := make([]string, len(listeners))
	for i, ln := range listeners {
		addrs[i] = ln.Addr().String()
	}
	log.Info("serving the Kubernetes API", "addrs", strings.Join(addrs, ","), "kubeconfig", kubeconfig,
		"etcd", etcdDescription(*etcdServers, *dataDir), "admission", strings.Join(chain.Enabled(), ","),
		"authorization", strings.Join(modes, ","),
		"startup", time.Since(start).Round(time.Millisecond))
	failed := make(chan error, len(servers))
	for i, hs := range servers {
		hs.Handler = srv
		go func() { failed <- hs.Serve(listeners[i]) }() // returns at Shutdown
	}
	select {
	case <-ctx.Done():
	case err := <-failed:
		log.Error("serve", "err", err)
		os.Exit(1)
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, hs := range servers {
		hs.Shutdown(shutdown)
	}
}

// followAdmission feeds the webhook dispatcher the webhook configurations
// and the policy evaluators the policies and their bindings, from the
// server's watch cache, as kube-apiserver's plugins follow them with
// informers: a configuration is in effect a moment after it is stored.
func followAdmission(ctx context.Context, srv *apiserver.Server, hooks *webhook.Dispatcher, policies *admissionpolicy.Evaluator,
	mutating *admissionpolicy.Mutator) error {
	for _, f := range []struct {
		res *apiserver.Resource
		to  apiserver.Follower
	}{
		{admissionregistration.MutatingWebhookConfigurations, hooks.Mutating()},
		{admissionregistration.ValidatingWebhookConfigurations, hooks.Validating()},
		{admissionregistration.ValidatingAdmissionPolicies, policies.Policies()},
		{admissionregistration.ValidatingAdmissionPolicyBindings, policies.Bindings()},
		{admissionregistration.MutatingAdmissionPolicies, mutating.Policies()},
		{admissionregistration.MutatingAdmissionPolicyBindings, mutating.Bindings()},
	} {
		if err := srv.Follow(ctx, f.res.GroupVersionResource(), f.to); err != nil {
			return err
		}
	}
	return nil
}

// connectEtcd dials the external cluster, or starts the embedded member.
func connectEtcd(servers, dataDir, clientURL string) (*clientv3.Client, func(), error) {
	if servers != "" {
		c, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(servers, ","), DialTimeout: 5 * time.Second})
		if err != nil {
			return nil, nil, err
		}
		return c, func() { c.Close() }, nil
	}
	e, err := store.StartEmbedded(store.EmbeddedOptions{DataDir: dataDir, ClientURL: clientURL})
	if err != nil {
		return nil, nil, err
	}
	return e.Client, e.Close, nil
}

func etcdDescription(servers, dataDir string) string {
	if servers != "" {
		return servers
	}
	return "embedded in " + dataDir
}
