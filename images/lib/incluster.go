package lib

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/mkube/mkube/images/shell"
)

// ServiceAccountDir is where the kubelet mounts a pod's service-account
// token and the cluster's CA, where client-go's in-cluster config reads them.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// InClusterClient is client-go's rest.InClusterConfig as an HTTP client:
// the cluster's CA and the pod's service-account token, through the pod's
// network.
func InClusterClient(p *shell.Process) (*http.Client, error) {
	if p.Getenv("KUBERNETES_SERVICE_HOST") == "" || p.Getenv("KUBERNETES_SERVICE_PORT") == "" {
		return nil, fmt.Errorf("unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined")
	}
	token, err := p.FS.ReadFile(ServiceAccountDir + "/token")
	if err != nil {
		return nil, fmt.Errorf("open %s/token: no such file or directory", ServiceAccountDir)
	}
	caPEM, err := p.FS.ReadFile(ServiceAccountDir + "/ca.crt")
	roots := x509.NewCertPool()
	if err != nil || !roots.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("unable to load root certificates: unable to parse bytes as PEM block")
	}
	return &http.Client{Transport: bearer{token: strings.TrimSpace(string(token)), next: PodTransport(p, &tls.Config{RootCAs: roots})}}, nil
}

// bearer adds the token to each request, as client-go's transport does.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// PodTransport is an HTTP transport whose connections the pod makes
// (shell.Process.Connect), with tlsConfig for https.
func PodTransport(p *shell.Process, tlsConfig *tls.Config) *http.Transport {
	return &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, address string) (net.Conn, error) {
			return p.Connect(ctx, "tcp", address)
		}}
}
