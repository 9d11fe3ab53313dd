// Package webhookclient calls the webhooks the API server is configured
// to call, admission webhooks (apiserver/admission/webhook) and custom
// resource conversion webhooks (apiserver/customresource), as
// kube-apiserver's k8s.io/apiserver/pkg/util/webhook does for both: an
// HTTPS POST to the webhook's url, or to its Service, checked against its
// caBundle, over connections kept open between calls.
//
// Where things live:
//
//	file       what it holds
//	client.go  Clients: one HTTP client per webhook client config (url or Service, caBundle), kept between calls, and the POST
//	dial.go    reaching a Service: a ready endpoint of its port, then a port-forward through that pod's node's kubelet
package webhookclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/mkube/mkube/apiserver/admission"
)

// maxAnswerBytes bounds a webhook's answer: the object it may send back
// in a patch is at most an etcd value (1.5 MiB), so 3 MiB, kube-apiserver's
// request limit, is plenty.
const maxAnswerBytes = 3 << 20

// Objects is what a Service's dial reads: its Service, EndpointSlices
// and the Node of the pod it picks.
type Objects = admission.Objects

// Clients are the webhooks' HTTP clients, one per CA bundle and kind of
// address (a URL, or a Service reached through its pods' nodes), so that
// a webhook's TLS connections stay open from one request to the next, as
// kube-apiserver's ClientManager caches its REST clients. A transport's
// pool is per host: a Service's URL host, <service>.<namespace>.svc:<port>,
// is what its dial resolves.
type Clients struct {
	mu    sync.Mutex
	byKey map[clientKey]*http.Client
}

type clientKey struct {
	caBundle string
	service  bool
}

func (cs *Clients) get(cc admissionregistrationv1.WebhookClientConfig) (*http.Client, error) {
	key := clientKey{caBundle: string(cc.CABundle), service: cc.Service != nil}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if c, ok := cs.byKey[key]; ok {
		return c, nil
	}
	transport, err := NewTransport(cc.CABundle, nil, key.service)
	if err != nil {
		return nil, err
	}
	c := &http.Client{Transport: transport}
	if cs.byKey == nil {
		cs.byKey = map[clientKey]*http.Client{}
	}
	cs.byKey[key] = c
	return c, nil
}

// NewTransport is an HTTPS transport that checks servers against
// caBundle and presents clientCert, if set; with service, it dials the
// hosts <service>.<namespace>.svc:<port> through the Service's pods
// (dial.go), which needs the request's context to carry the API server's
// Objects (WithObjects). kube-aggregator's proxy to an aggregated API
// server is such a transport, presenting the front proxy's certificate.
func NewTransport(caBundle []byte, clientCert *tls.Certificate, service bool) (*http.Transport, error) {
	// Without a CA bundle the system's roots are trusted, as Kubernetes
	// does (which no webhook with a cluster-made certificate passes).
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(caBundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, errors.New("unable to load root certificates: unable to parse bytes as PEM block")
		}
		tlsConfig.RootCAs = pool
	}
	if clientCert != nil {
		tlsConfig.Certificates = []tls.Certificate{*clientCert}
	}
	transport := &http.Transport{TLSClientConfig: tlsConfig, MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second,
		DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext}
	if service {
		transport.DialContext = dialServiceHost
	}
	return transport, nil
}

// WithObjects gives a request's context the Objects a Service's dial
// resolves the Service in.
func WithObjects(ctx context.Context, objs Objects) context.Context {
	return context.WithValue(ctx, objectsKey{}, objs)
}

// objectsKey carries the API server's Objects to a Service's dial, which
// net/http calls with a context and an address only.
type objectsKey struct{}

// dialServiceHost dials <service>.<namespace>.svc:<port> (dial.go).
func dialServiceHost(ctx context.Context, _, addr string) (net.Conn, error) {
	c, ok := ctx.Value(objectsKey{}).(Objects)
	if !ok {
		return nil, fmt.Errorf("dial %s: no objects to resolve the service in", addr)
	}
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	name, namespace, ok := strings.Cut(strings.TrimSuffix(host, ".svc"), ".")
	port, perr := strconv.Atoi(portText)
	if !ok || !strings.HasSuffix(host, ".svc") || perr != nil {
		return nil, fmt.Errorf("dial %s: not a service address", addr)
	}
	return dialService(ctx, c, namespace, name, int32(port))
}

// webhookURL is where a webhook is called: its url, or
// https://<service>.<namespace>.svc:<port><path> for a Service.
func webhookURL(cc admissionregistrationv1.WebhookClientConfig) (*url.URL, error) {
	if cc.URL != nil {
		return url.Parse(*cc.URL)
	}
	if cc.Service == nil {
		return nil, errors.New("webhook has no clientConfig.url or clientConfig.service")
	}
	port := int32(443)
	if cc.Service.Port != nil {
		port = *cc.Service.Port
	}
	u := &url.URL{Scheme: "https", Host: net.JoinHostPort(cc.Service.Name+"."+cc.Service.Namespace+".svc", strconv.Itoa(int(port)))}
	if cc.Service.Path != nil {
		u.Path = *cc.Service.Path
	}
	return u, nil
}

// Post sends body to the webhook cc names and returns its answer's body;
// objs resolve a Service. ctx
// carries the webhook's timeout, which the webhook is told as
// ?timeout=<seconds>s, rounded up, as Kubernetes' REST client tells it.
// Its errors read as the REST client's:
//
//	Post "https://e2e-test-webhook.ns.svc:8443/always-allow-delay-5s?timeout=1s": context deadline exceeded
func (cs *Clients) Post(ctx context.Context, cc admissionregistrationv1.WebhookClientConfig, objs Objects, body []byte) ([]byte, error) {
	u, err := webhookURL(cc)
	if err != nil {
		return nil, err
	}
	if deadline, ok := ctx.Deadline(); ok {
		if left := time.Until(deadline); left > 0 {
			if rounded := left.Truncate(time.Second); rounded != left {
				left = rounded + time.Second
			}
			q := u.Query()
			q.Set("timeout", left.String())
			u.RawQuery = q.Encode()
		}
	}
	client, err := cs.get(cc)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(WithObjects(ctx, objs), http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return nil, fmt.Errorf("Post %q: read answer: %w", u, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("Post %q: the server responded with the status code %d: %s", u, resp.StatusCode,
			strings.TrimSpace(string(data)))
	}
	return data, nil
}
