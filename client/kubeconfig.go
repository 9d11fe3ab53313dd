package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Identity is who a client is to the API server: the user and groups its
// client certificate names (CN and O), as the server's authenticator
// reads them.
type Identity struct {
	User   string
	Groups []string
}

// FromKubeconfig returns a client for what the kubeconfig file at path
// names in its current context, read by client-go's clientcmd as
// kubectl --kubeconfig reads it: the cluster (server URL, CA) and the
// user (client certificate and key, or a bearer token). Each component of
// the secure port runs on one (seed 000: every component talks to the API
// server over https on port 6443).
func FromKubeconfig(path, userAgent string) (*Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	c, err := ForConfig(cfg, userAgent)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return c, nil
}

// ForConfig is a client for a client-go rest.Config, on client-go's
// transport: TLS with its CA and client certificate, HTTP/2 (one TCP
// connection and one TLS session carry every request and watch of the
// process, multiplexed, with client-go's health-check pings), and its
// bearer token, if any. A TLS session cache lets a reconnect resume the
// session rather than repeat the full handshake.
func ForConfig(cfg *rest.Config, userAgent string) (*Client, error) {
	if err := rest.LoadTLSFiles(cfg); err != nil {
		return nil, err
	}
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, err
	}
	if tlsConfig != nil {
		tlsConfig.ClientSessionCache = tls.NewLRUClientSessionCache(0)
	}
	// client-go's own settings (transport.New), with New's idle
	// connections for a plain-HTTP server, where there is no HTTP/2.
	transport := utilnet.SetTransportDefaults(&http.Transport{
		Proxy: http.ProxyFromEnvironment, TLSClientConfig: tlsConfig, TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second,
		DialContext: cfg.Dial, // nil: net's; a container's program dials through its pod's network
	})
	rt, err := rest.HTTPWrappersForConfig(cfg, transport)
	if err != nil {
		return nil, err
	}
	id, err := certificateIdentity(cfg.TLSClientConfig.CertData)
	if err != nil {
		return nil, err
	}
	return &Client{base: strings.TrimRight(cfg.Host, "/"), http: &http.Client{Transport: rt}, userAgent: userAgent, user: id}, nil
}

// certificateIdentity reads the user and groups of a PEM client
// certificate; none (a token, or no credentials) is the zero Identity.
func certificateIdentity(certPEM []byte) (Identity, error) {
	if len(certPEM) == 0 {
		return Identity{}, nil
	}
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return Identity{}, fmt.Errorf("client certificate is not PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return Identity{}, fmt.Errorf("client certificate: %w", err)
	}
	return Identity{User: cert.Subject.CommonName, Groups: slices.Clone(cert.Subject.Organization)}, nil
}

// Identity is who the API server takes c's requests to be from: the user
// of its client certificate, or the one it impersonates; the zero
// Identity for a client without a certificate (the plain port, a token).
func (c *Client) Identity() Identity { return c.user }

// Impersonate returns a client that acts as user, in groups, over c's
// connection: each request carries the headers of kubectl's --as and
// --as-group (Impersonate-User, Impersonate-Group), which the API server
// honours only if c's own user may impersonate them. A fleet of kubelets
// (package kubelet) is one process speaking for each of its nodes so.
func (c *Client) Impersonate(user string, groups ...string) *Client {
	h := http.Header{}
	h.Set(authenticationv1.ImpersonateUserHeader, user)
	for _, g := range groups {
		h.Add(authenticationv1.ImpersonateGroupHeader, g)
	}
	as := *c
	as.impersonate, as.user = h, Identity{User: user, Groups: slices.Clone(groups)}
	return &as
}

// FromFlags is the client a component's --server and --kubeconfig ask
// for: the kubeconfig's (the secure port, as the component's own user),
// or else the plain port at server. Both given (serverSet: --server was
// on the command line) is an error, so that a component meant to run with
// least privilege never runs as system:masters on the learner's port by
// a slip. A kubeconfig not there yet is waited for until ctx ends or
// timeout passes: the API server writes the components' at its first
// start, which may come after theirs (docker compose starts all at once).
func FromFlags(ctx context.Context, server string, serverSet bool, kubeconfig, userAgent string, timeout time.Duration) (*Client, error) {
	switch {
	case kubeconfig != "" && serverSet:
		return nil, fmt.Errorf("--server %s and --kubeconfig %s are both given: the kubeconfig names the server and who this component is, "+
			"--server is the learner's plain port, where it would be system:masters; give one", server, kubeconfig)
	case kubeconfig == "":
		return New(server, userAgent), nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		if _, err := os.Stat(kubeconfig); !errors.Is(err, os.ErrNotExist) {
			return FromKubeconfig(kubeconfig, userAgent)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("kubeconfig %s: not written by the API server: %w", kubeconfig, ctx.Err())
		case <-time.After(200 * time.Millisecond): // as WaitForServer polls
		}
	}
}
