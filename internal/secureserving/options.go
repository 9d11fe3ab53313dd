package secureserving

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
)

// Options are the flags of a component's secure port, named as
// kube-scheduler's and kube-controller-manager's.
type Options struct {
	BindAddress      string
	Port             int
	CertFile         string
	KeyFile          string
	ClientCAFile     string
	AlwaysAllowPaths []string
}

// AddFlags declares the flags on fs, with port as --secure-port's default
// (10259 for the scheduler, 10257 for the controller manager).
func AddFlags(fs *flag.FlagSet, port int) *Options {
	o := &Options{AlwaysAllowPaths: []string{"/healthz", "/readyz", "/livez"}}
	fs.StringVar(&o.BindAddress, "bind-address", "127.0.0.1", "the IP address on which to listen for the --secure-port port (Kubernetes' default is 0.0.0.0; mkube keeps it on the loopback so that a learner's laptop exposes nothing)")
	fs.IntVar(&o.Port, "secure-port", port, "the port on which to serve HTTPS with authentication and authorization: /metrics, /healthz, /readyz, /livez. If 0, don't serve HTTPS at all.")
	fs.StringVar(&o.CertFile, "tls-cert-file", "", "file containing the default x509 certificate for HTTPS; without it (and --tls-private-key-file) a self-signed certificate is generated in memory at start")
	fs.StringVar(&o.KeyFile, "tls-private-key-file", "", "file containing the default x509 private key matching --tls-cert-file")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", "", "a CA bundle: a client certificate it signed authenticates its CN as user and O as groups; empty: the CA of --kubeconfig's cluster, if any")
	fs.Func("authorization-always-allow-paths", "a comma-separated list of HTTP paths to skip during authorization, i.e. these are authorized without contacting the API server (default /healthz,/readyz,/livez)", func(s string) error {
		o.AlwaysAllowPaths = nil
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				o.AlwaysAllowPaths = append(o.AlwaysAllowPaths, p)
			}
		}
		return nil
	})
	return o
}

// Enabled reports whether the port is to be served (--secure-port not 0).
func (o *Options) Enabled() bool { return o.Port != 0 }

// Listen binds the port, before anything slow starts, so that a port in
// use stops the component at once with Kubernetes' words.
func (o *Options) Listen() (net.Listener, error) {
	addr := net.JoinHostPort(o.BindAddress, strconv.Itoa(o.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("failed to listen on %s: %w", addr, err)
	}
	return ln, nil
}

// TLSConfig is the serving configuration: the given certificate, or a
// self-signed one for the bind address made now; client certificates are
// asked for and, when given, verified against clientCAs (nil: none).
func (o *Options) TLSConfig(clk clock.PassiveClock, clientCAs *x509.CertPool) (*tls.Config, error) {
	cert, given, err := GivenPair(o.CertFile, o.KeyFile)
	if !given {
		cert, err = selfSigned(o.BindAddress, clk.Now())
	}
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCAs != nil {
		cfg.ClientCAs, cfg.ClientAuth = clientCAs, tls.VerifyClientCertIfGiven
	}
	return cfg, nil
}

// ClientCAs is the pool client certificates are verified against:
// --client-ca-file, else the CA kubeconfig trusts (mkube's one cluster CA
// signs the clients' certificates too, as kubeadm's does); nil when
// neither is given (the plain port), so only bearer tokens authenticate.
func (o *Options) ClientCAs(kubeconfig string) (*x509.CertPool, error) {
	var pemData []byte
	switch {
	case o.ClientCAFile != "":
		data, err := os.ReadFile(o.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("client CA: %w", err)
		}
		pemData = data
	case kubeconfig != "":
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
		}
		if err := rest.LoadTLSFiles(cfg); err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
		}
		pemData = cfg.CAData
	}
	if len(pemData) == 0 {
		return nil, nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemData) {
		return nil, errors.New("client CA: no certificate in it")
	}
	return pool, nil
}
