// Package aggregator is kube-aggregator's part of the API server: the
// group-versions that an APIService hands to a Service (an aggregated API
// server, such as metrics-server or Kubernetes' sample-apiserver) are
// served by proxying to it, and discovery lists them beside the built-in
// ones. It implements apiserver.Aggregated.
//
//  1. The Aggregator follows the APIServices (Replace, Update): each one
//     with spec.service is a group-version to proxy.
//  2. apiregistration's availability controller asks it to Check one:
//     GET /apis/<group>/<version> through the Service. A 2xx answer makes
//     the APIService Available ("all checks passed") and is the
//     group-version's discovery document; the check repeats, so a server
//     that goes away becomes unavailable.
//  3. A request for /apis/<group>/<version>/... is proxied (proxy.go)
//     while the APIService is Available, else answered 503. The user the
//     API server authenticated travels in the front proxy's request
//     headers (X-Remote-User, X-Remote-Group, X-Remote-Extra-*); the
//     aggregated server believes them because the connection presents the
//     front-proxy client certificate, signed by the CA it reads from
//     kube-system/extension-apiserver-authentication (authconfigmap.go).
//
// The Aggregator, steps 1 and 2 and discovery of the aggregated
// group-versions live in aggregator.go.
package aggregator

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/webhookclient"
)

// checkTimeout bounds a discovery check, as kube-aggregator's remote
// availability controller bounds it: a server slower than 5 s to list
// its resources is taken for down.
const checkTimeout = 5 * time.Second

// checker is who the discovery checks are sent as: kube-aggregator's own
// user, in system:masters, so that no authorization refuses them.
var checker = authenticationv1.UserInfo{Username: "system:kube-aggregator", Groups: []string{"system:masters"}}

// Aggregator proxies the Service-backed APIServices' group-versions.
type Aggregator struct {
	objects    webhookclient.Objects // resolves a Service to a pod and its node
	clientCert *tls.Certificate      // the front proxy's; nil presents none
	log        *slog.Logger

	mu sync.RWMutex
	// apis are the Service-backed APIServices, by group-version.
	apis map[schema.GroupVersion]*remoteAPI
	// discovered is each APIService's last discovery check, by name.
	discovered map[string]discovery
	// transports keep connections open between requests, one per way of
	// trusting a server (its CA bundle, or none).
	transports map[transportKey]http.RoundTripper
}

// remoteAPI is one Service-backed APIService as the proxy needs it;
// replaced, never changed, when the APIService changes.
type remoteAPI struct {
	name      string
	gv        schema.GroupVersion
	host      string // <service>.<namespace>.svc:<port>
	available bool
	transport http.RoundTripper
	agg       *Aggregator
}

// discovery is what a group-version's server last listed.
type discovery struct {
	resources []metav1.APIResource // nil: no check has passed
	failed    bool                 // the last check failed
}

type transportKey struct {
	caBundle string
	insecure bool
}

// New is an Aggregator that presents clientCert (nil: none, as an API
// server without --proxy-client-cert-file). It is the Aggregated of the
// server's Config, and proxies once Start has run.
func New(clientCert *tls.Certificate, log *slog.Logger) *Aggregator {
	return &Aggregator{clientCert: clientCert, log: log.With("controller", "aggregator"),
		apis: map[schema.GroupVersion]*remoteAPI{}, discovered: map[string]discovery{}, transports: map[transportKey]http.RoundTripper{}}
}

var apiServicesGVR = apiregistrationv1.SchemeGroupVersion.WithResource("apiservices")

// Start follows srv's APIServices, until ctx ends, and reaches their
// Services through srv's objects. It runs before srv serves.
func (a *Aggregator) Start(ctx context.Context, srv *apiserver.Server) error {
	a.objects = srv.Objects()
	return srv.Follow(ctx, apiServicesGVR, a)
}

// Proxy is the handler of gv's requests if a Service-backed APIService
// has it (apiserver.Aggregated).
func (a *Aggregator) Proxy(gv schema.GroupVersion) http.Handler {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if api := a.apis[gv]; api != nil {
		return api
	}
	return nil
}

// GroupVersions are the proxied group-versions with what their servers
// last listed (apiserver.Aggregated).
func (a *Aggregator) GroupVersions() []apiserver.AggregatedGroupVersion {
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := make([]apiserver.AggregatedGroupVersion, 0, len(a.apis))
	for gv, api := range a.apis {
		d := a.discovered[api.name]
		out = append(out, apiserver.AggregatedGroupVersion{GroupVersion: gv, Resources: d.resources, Stale: d.failed || !api.available})
	}
	return out
}

// Replace takes every APIService (apiserver.Follower).
func (a *Aggregator) Replace(objs []runtime.Object) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.apis = map[schema.GroupVersion]*remoteAPI{}
	names := map[string]bool{}
	for _, obj := range objs {
		svc := obj.(*apiregistrationv1.APIService)
		names[svc.Name] = true
		a.putLocked(svc)
	}
	for name := range a.discovered {
		if !names[name] {
			delete(a.discovered, name)
		}
	}
}

// Update takes one change of an APIService (apiserver.Follower).
func (a *Aggregator) Update(obj, prev runtime.Object) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if prev != nil {
		old := prev.(*apiregistrationv1.APIService)
		if api := a.apis[groupVersion(old)]; api != nil && api.name == old.Name {
			delete(a.apis, api.gv)
		}
		if obj == nil {
			delete(a.discovered, old.Name)
		}
	}
	if obj != nil {
		a.putLocked(obj.(*apiregistrationv1.APIService))
	}
}

// putLocked records svc if a Service backs it; a Local one is this
// server's to serve.
func (a *Aggregator) putLocked(svc *apiregistrationv1.APIService) {
	api, err := a.remote(svc)
	if err != nil {
		a.log.Warn("cannot proxy to the APIService's Service", "apiservice", svc.Name, "err", err)
	}
	if api != nil {
		api.available = isAvailable(svc)
		a.apis[api.gv] = api
	}
}

// remote is svc as the proxy needs it, nil for a Local APIService.
func (a *Aggregator) remote(svc *apiregistrationv1.APIService) (*remoteAPI, error) {
	ref := svc.Spec.Service
	if ref == nil {
		return nil, nil
	}
	port := int32(443)
	if ref.Port != nil {
		port = *ref.Port
	}
	t, err := a.transportLocked(svc.Spec.CABundle, svc.Spec.InsecureSkipTLSVerify)
	if err != nil {
		return nil, err
	}
	return &remoteAPI{name: svc.Name, gv: groupVersion(svc), agg: a, transport: t,
		host: net.JoinHostPort(ref.Name+"."+ref.Namespace+".svc", strconv.Itoa(int(port)))}, nil
}

// transportLocked is the transport that trusts what caBundle signs (or
// anything, insecure), made once per bundle.
func (a *Aggregator) transportLocked(caBundle []byte, insecure bool) (http.RoundTripper, error) {
	key := transportKey{string(caBundle), insecure}
	if t, ok := a.transports[key]; ok {
		return t, nil
	}
	t, err := webhookclient.NewTransport(caBundle, a.clientCert, true)
	if err != nil {
		return nil, err
	}
	t.TLSClientConfig.InsecureSkipVerify = insecure
	// The proxy streams watches: a response is copied as it comes.
	t.DisableCompression = true
	a.transports[key] = t
	return t, nil
}

// Check is the discovery check of a Service-backed APIService:
// GET /apis/<group>/<version> through its Service, as
// system:kube-aggregator. Its answer, on success, is what discovery
// lists for the group-version; its error reads as kube-aggregator's
// FailedDiscoveryCheck message.
func (a *Aggregator) Check(ctx context.Context, svc *apiregistrationv1.APIService) error {
	a.mu.Lock()
	api, err := a.remote(svc)
	a.mu.Unlock()
	if err != nil || api == nil {
		return err
	}
	path := "/apis/" + api.gv.Group + "/" + api.gv.Version
	u := (&url.URL{Scheme: "https", Host: api.host, Path: path}).String()
	resources, err := api.discover(ctx, path)
	a.mu.Lock()
	d := a.discovered[svc.Name]
	if err != nil {
		d.failed = true
	} else {
		d = discovery{resources: resources}
	}
	a.discovered[svc.Name] = d
	a.mu.Unlock()
	if err != nil {
		return fmt.Errorf("failing or missing response from %s: %w", u, err)
	}
	return nil
}

// discover GETs the group-version's APIResourceList.
func (api *remoteAPI) discover(ctx context.Context, path string) ([]metav1.APIResource, error) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(webhookclient.WithObjects(ctx, api.agg.objects), http.MethodGet, "https://"+api.host+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	setUserHeaders(req.Header, checker)
	resp, err := api.transport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 3<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("bad status from https://%s%s: %d", api.host, path, resp.StatusCode)
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("decode the APIResourceList: %w", err)
	}
	if list.APIResources == nil {
		list.APIResources = []metav1.APIResource{} // listed, if empty
	}
	return list.APIResources, nil
}

func groupVersion(svc *apiregistrationv1.APIService) schema.GroupVersion {
	return schema.GroupVersion{Group: svc.Spec.Group, Version: svc.Spec.Version}
}

func isAvailable(svc *apiregistrationv1.APIService) bool {
	for _, c := range svc.Status.Conditions {
		if c.Type == apiregistrationv1.Available {
			return c.Status == apiregistrationv1.ConditionTrue
		}
	}
	return false
}
