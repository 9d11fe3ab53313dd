package kubeletclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// Config is kube-apiserver's kubelet client flags.
type Config struct {
	// CertFile and KeyFile are the client certificate presented to
	// kubelets (--kubelet-client-certificate, --kubelet-client-key);
	// empty presents none, and a kubelet that lets no anonymous request
	// in refuses the API server (401).
	CertFile, KeyFile string
	// CAFile verifies the kubelets' serving certificates
	// (--kubelet-certificate-authority); empty verifies nothing.
	CAFile string
}

// Client reaches kubelets as Config says. The zero Client, or nil, is
// kube-apiserver without any of the flags: HTTPS, no client certificate,
// no verification.
type Client struct {
	tls *tls.Config
}

// New loads the files cfg names.
func New(cfg Config) (*Client, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.CAFile == ""}
	if cfg.CertFile != "" || cfg.KeyFile != "" {
		pair, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("--kubelet-client-certificate and --kubelet-client-key: %w", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	if cfg.CAFile != "" {
		data, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--kubelet-certificate-authority: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("--kubelet-certificate-authority: %s holds no PEM certificate", cfg.CAFile)
		}
	}
	return &Client{tls: c}, nil
}

// Scheme is the kubelets' port's: https.
const Scheme = "https"

// DialTimeout bounds reaching a node's kubelet: a kubelet that does not
// accept a connection in 2 s is taken as down, and the next address tried.
const DialTimeout = 2 * time.Second

// TLSConfig is a copy of the client's TLS settings, for HTTP/1.1 only:
// the kubelet's streams upgrade the connection, which HTTP/2 cannot.
func (c *Client) TLSConfig() *tls.Config {
	if c == nil || c.tls == nil {
		return &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}}
	}
	out := c.tls.Clone()
	out.NextProtos = []string{"http/1.1"}
	return out
}

// Transport is an HTTP transport to kubelets: the client's TLS, dialing
// within DialTimeout. Upgrading handlers (apimachinery's proxy) take the
// TLS settings from it too.
func (c *Client) Transport() *http.Transport {
	return &http.Transport{DialContext: (&net.Dialer{Timeout: DialTimeout}).DialContext, TLSClientConfig: c.TLSConfig(),
		TLSHandshakeTimeout: 10 * time.Second, ForceAttemptHTTP2: false}
}

// Dial opens a TLS connection to the kubelet at addr (host:port), its
// handshake done: for the streams the API server upgrades itself
// (port-forward tunnels, the webhooks' route to a pod).
func (c *Client) Dial(ctx context.Context, addr string) (net.Conn, error) {
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: DialTimeout}, Config: c.TLSConfig()}
	return d.DialContext(ctx, "tcp", addr)
}
