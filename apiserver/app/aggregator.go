package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"path/filepath"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/aggregator"
	"github.com/mkube/mkube/apiserver/pki"
	"github.com/mkube/mkube/apiserver/registry/core"
)

// newAggregator is the proxy to aggregated API servers, presenting the
// front proxy's certificate from p (nil, without the secure port: none,
// so an aggregated server takes the requests as anonymous).
func newAggregator(p *pki.PKI, log *slog.Logger) (*aggregator.Aggregator, error) {
	if p == nil {
		return aggregator.New(nil, log), nil
	}
	name := filepath.Join(p.Dir, pki.FrontProxyClient.Name)
	cert, err := tls.LoadX509KeyPair(name+".crt", name+".key")
	if err != nil {
		return nil, err
	}
	return aggregator.New(&cert, log), nil
}

// publishAuthentication writes kube-system/extension-apiserver-authentication
// for aggregated API servers: the client CA and the front proxy's, if the
// secure port has them.
func publishAuthentication(ctx context.Context, srv *apiserver.Server, clientCA *x509.Certificate, p *pki.PKI) error {
	var frontProxyCA *x509.Certificate
	if p != nil {
		frontProxyCA = p.FrontProxyCA
	}
	return aggregator.PublishAuthentication(ctx, srv.StorageFor(core.ConfigMaps.GroupVersionResource()), clientCA, frontProxyCA)
}
