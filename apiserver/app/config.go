package app

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/admission"
	admissionpolicy "github.com/mkube/mkube/apiserver/admission/policy"
	"github.com/mkube/mkube/apiserver/admission/webhook"
	"github.com/mkube/mkube/apiserver/aggregator"
	"github.com/mkube/mkube/apiserver/authorization"
	"github.com/mkube/mkube/apiserver/authorization/node"
	rbacauthz "github.com/mkube/mkube/apiserver/authorization/rbac"
	"github.com/mkube/mkube/apiserver/kubeletclient"
	"github.com/mkube/mkube/apiserver/pki"
	"github.com/mkube/mkube/apiserver/registry"
	"github.com/mkube/mkube/apiserver/storageformat"
	"github.com/mkube/mkube/store"
)

// Config is the server NewConfig made ready from Options: its ports
// listening, its certificates and kubeconfigs written, its authenticator
// and etcd connection made, and the apiserver.Config that wires them. A
// test may still change Server (a fake clock, an authorizer of its own)
// before New.
type Config struct {
	Server apiserver.Config

	opts  Options
	log   *slog.Logger
	clock clock.WithDelayedExecution
	began time.Time // for the startup time the server logs

	// plain and secure listen (nil if that port is off); Close closes them
	// if New never serves on them.
	plain, secure net.Listener
	tls           *tls.Config
	kubeconfig    string            // admin.kubeconfig of the secure port
	clientCA      *x509.Certificate // trusted for client certificates: the secure port's
	frontProxy    *pki.PKI          // the front proxy's CA and certificate, with the secure port's PKI
	advertise     netip.Addr        // the kubernetes Service's endpoint, with the secure port

	store *store.Store
	// The policies the authorizers and admission follow, fed by the
	// post-start hooks from the server's own watch cache.
	rbac       *rbacauthz.Policy
	graph      *node.Graph
	webhooks   *webhook.Dispatcher
	policies   *admissionpolicy.Evaluator
	mutating   *admissionpolicy.Mutator
	aggregator *aggregator.Aggregator
	admission  *admission.Chain
	modes      []string
	closers    []func() // run by Close, last first: etcd, the audit log
}

// NewConfig listens first (a port in use stops the start at once, saying
// so), then makes the certificates and kubeconfigs, the authenticator,
// the audit log and the etcd connection the options ask for. Its errors
// are *Error, naming the step that failed; on error nothing stays open.
func NewConfig(o Options) (_ *Config, err error) {
	// c, not the result, is what the deferred Close releases: an error
	// return sets the result to nil.
	c := &Config{opts: o, log: o.Log, clock: o.Clock}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.clock == nil {
		c.clock = clock.RealClock{}
	}
	c.began = c.clock.Now()
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	switch o.EndpointReconcilerType {
	case "", EndpointReconcilerLease, EndpointReconcilerNone:
	default:
		return nil, &Error{Step: fmt.Sprintf("--endpoint-reconciler-type %q: want %s or %s", o.EndpointReconcilerType,
			EndpointReconcilerLease, EndpointReconcilerNone)}
	}
	if c.admission, err = admission.NewChain(o.EnableAdmissionPlugins, o.DisableAdmissionPlugins); err != nil {
		return nil, &Error{"admission", err}
	}
	if c.modes, err = authorization.ParseModes(o.AuthorizationModes); err != nil {
		return nil, &Error{"authorization", err}
	}
	storageMediaType, err := storageformat.Parse(o.StorageMediaType)
	if err != nil {
		return nil, &Error{"storage media type", err}
	}
	certDir := o.CertDir
	if certDir == "" {
		certDir = filepath.Join(o.DataDir, "pki")
	}
	// The cert dir is made (or read) under its lock: API servers of one
	// HA cluster may share it and start at once (pki.Lock).
	unlock, err := pki.Lock(certDir)
	if err != nil {
		return nil, &Error{"certificates", err}
	}
	if err := c.listen(certDir); err != nil {
		unlock()
		return nil, err
	}
	authenticator, saTokens, err := o.Authentication.build(certDir, c.clientCA, c.clock, c.log)
	unlock()
	if err != nil {
		return nil, &Error{"authentication", err}
	}
	auditLog, err := o.Authentication.openAudit(c.log)
	if err != nil {
		return nil, &Error{"audit", err}
	}
	if auditLog != nil {
		c.closers = append(c.closers, func() { auditLog.Close() }) // after the servers' Shutdown: the last requests are written
	}
	client, closeEtcd, err := connectEtcd(o)
	if err != nil {
		return nil, &Error{"etcd", err}
	}
	c.closers = append(c.closers, closeEtcd)
	c.store = store.New(client)
	c.webhooks, c.policies, c.mutating = webhook.New(c.log), admissionpolicy.New(c.log), admissionpolicy.NewMutator(c.log)
	if c.aggregator, err = newAggregator(c.frontProxy, c.log); err != nil {
		return nil, &Error{"aggregator", err}
	}
	if c.secure != nil {
		if c.advertise, err = advertiseAddress(o.AdvertiseAddress); err != nil {
			return nil, &Error{"advertise address", err}
		}
	}
	kubeletClient, err := c.kubeletClient(certDir)
	if err != nil {
		return nil, &Error{"kubelet client", err}
	}
	c.rbac, c.graph = rbacauthz.NewPolicy(), node.NewGraph()
	c.Server = apiserver.Config{Store: c.store, Registry: registry.New(), Admission: c.admission, Webhooks: c.webhooks,
		Policies: c.policies, MutatingPolicies: c.mutating, Authenticator: authenticator, ServiceAccountTokens: saTokens,
		Audit: auditLog, Authorizer: authorization.Chain(c.modes, c.rbac, nodeMode(c.graph)), Aggregated: c.aggregator,
		Log: c.log, WatchCacheSize: o.WatchCacheSize, Profiling: o.Profiling, Kubelet: kubeletClient,
		StorageMediaType: storageMediaType}
	return c, nil
}

// kubeletClient is the API server's client of the kubelets' port: the
// flags' files, else, with a secure port, the PKI's
// apiserver-kubelet-client certificate (kubeadm's
// --kubelet-client-certificate=/etc/kubernetes/pki/apiserver-kubelet-client.crt).
// No CA is kubeadm's default too: kubelets sign their own serving
// certificates, which nothing else could verify.
func (c *Config) kubeletClient(certDir string) (*kubeletclient.Client, error) {
	cfg := c.opts.Kubelet
	if cfg.CertFile == "" && cfg.KeyFile == "" && c.secure != nil {
		cfg.CertFile = filepath.Join(certDir, pki.APIServerKubeletClient.Name+".crt")
		cfg.KeyFile = filepath.Join(certDir, pki.APIServerKubeletClient.Name+".key")
	}
	if cfg.CAFile == "" {
		c.log.Info("kubelets' serving certificates are not verified (no --kubelet-certificate-authority), as kube-apiserver without it")
	}
	return kubeletclient.New(cfg)
}

// listen opens the plain port, then the secure one with its certificates
// (made in certDir, or reused) and the components' kubeconfigs.
func (c *Config) listen(certDir string) error {
	o := c.opts
	if o.PlainAddress != "" {
		ln, err := net.Listen("tcp", o.PlainAddress)
		if err != nil {
			return &Error{"listen", err}
		}
		c.plain = ln
		c.log.Warn("the plain port serves anyone without authentication, as kube-apiserver's old insecure port did: for curl and learners", "addr", ln.Addr().String())
	}
	if o.SecureAddress != "" {
		ln, err := net.Listen("tcp", o.SecureAddress)
		if err != nil {
			return &Error{"listen", err}
		}
		c.secure = ln
		bind, _, _ := net.SplitHostPort(o.SecureAddress)
		port := ln.Addr().(*net.TCPAddr).Port
		tlsConfig, kubeconfig, p, err := secureServing(certDir, bind, port, c.clock.Now())
		if err != nil {
			return &Error{"certificates", err}
		}
		if err := writeComponentKubeconfigs(p, o.KubeconfigDir, o.ControlPlaneEndpoint, port, o.NodeKubeconfigs, c.clock.Now()); err != nil {
			return &Error{"kubeconfigs", err}
		}
		c.tls, c.kubeconfig, c.clientCA, c.frontProxy = tlsConfig, kubeconfig, p.CA, p
	}
	if c.plain == nil && c.secure == nil {
		return &Error{Step: "nothing to serve: --port and --secure-port are both 0"}
	}
	return nil
}

// PlainURL is the plain port's http://HOST:PORT, "" if it is off.
func (c *Config) PlainURL() string {
	if c.plain == nil {
		return ""
	}
	return "http://" + c.plain.Addr().String()
}

// SecurePort is the port the secure port listens on, 0 if it is off.
func (c *Config) SecurePort() int {
	if c.secure == nil {
		return 0
	}
	return c.secure.Addr().(*net.TCPAddr).Port
}

// Kubeconfig is the path of admin.kubeconfig, "" without the secure port.
func (c *Config) Kubeconfig() string { return c.kubeconfig }

// Store is the etcd store the server is built on.
func (c *Config) Store() *store.Store { return c.store }

// Close releases what NewConfig opened: the listeners, then the rest in
// the reverse order of opening (etcd, then the audit log). A Server that
// ran closes them itself when its context ends.
func (c *Config) Close() {
	for _, ln := range []net.Listener{c.plain, c.secure} {
		if ln != nil {
			ln.Close()
		}
	}
	for i := len(c.closers) - 1; i >= 0; i-- {
		c.closers[i]()
	}
	c.closers = nil
}

// servers are the HTTP servers of the ports, each with its listener.
func (c *Config) servers(handler http.Handler) ([]*http.Server, []net.Listener) {
	var servers []*http.Server
	var listeners []net.Listener
	if c.plain != nil {
		servers = append(servers, &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second})
		listeners = append(listeners, c.plain)
	}
	if c.secure != nil {
		servers = append(servers, &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, TLSConfig: c.tls})
		listeners = append(listeners, tls.NewListener(c.secure, c.tls))
	}
	return servers, listeners
}

// connectEtcd dials the external cluster, or starts the embedded member
// (alone, or one of a cluster). The client of an external cluster is
// given every member: it fails over to another when one dies. The
// embedded member's client is wired to that member in-process, as
// kubeadm's stacked API server talks only to its local member, which
// forwards writes to the leader.
func connectEtcd(o Options) (*clientv3.Client, func(), error) {
	if o.EtcdServers != "" {
		c, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(o.EtcdServers, ","), DialTimeout: 5 * time.Second})
		if err != nil {
			return nil, nil, err
		}
		return c, func() { c.Close() }, nil
	}
	e, err := store.StartEmbedded(store.EmbeddedOptions{DataDir: o.DataDir, ClientURL: o.EtcdClientURL,
		AdvertiseClientURL: o.EtcdAdvertiseClientURL, Cluster: o.EtcdCluster})
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
