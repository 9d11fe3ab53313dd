package core

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/proxy"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/kubeletclient"
)

// The proxy subresources: a request to
//
//	/api/v1/nodes/<node>/proxy/<path>                      the node's kubelet
//	/api/v1/namespaces/<ns>/pods/<pod[:port]>/proxy/<path>  a port of the pod (proxy_pod.go)
//	/api/v1/namespaces/<ns>/services/<svc[:port]>/proxy/<path>  one ready endpoint of the Service (proxy_service.go)
//
// any method, is forwarded there, and the answer streamed back as it is:
// status, Content-Type and body. It is how a client outside the cluster
// network (kubectl on a laptop) reaches a kubelet or a pod anyway; mkube's
// CLI sends its faults this way (kubelet/server/faults.go). Only the API server's
// own failures are a Status: no such object (404), nothing to proxy to
// (503, "no endpoints available for service"), a kubelet it cannot reach
// (503).
//
// As Kubernetes' proxy handler, a GET or HEAD of .../proxy with nothing
// after it is redirected (301) to .../proxy/, so that the relative links
// of the page it gets resolve below the proxy.

// proxyVerbs are the HTTP methods a proxy takes, as RBAC verbs (HEAD is
// get); OPTIONS, which has none, is taken too (AnyMethod).
var proxyVerbs = []string{"create", "delete", "get", "patch", "update"}

// maxProxyBody bounds a forwarded request body: what goes through is a
// small command or form, never an upload.
const maxProxyBody = 1 << 20

// proxyPath is the path below .../<name>/proxy and the query, "/" if
// none; redirected reports that it answered the request with a redirect
// to the path with a slash.
func proxyPath(q *apiserver.Request) (path string, redirected bool) {
	// After the segments <name>/proxy, however the client escaped them.
	var rest string
	segments := strings.Split(q.R.URL.EscapedPath(), "/")
	for i := 0; i+1 < len(segments); i++ {
		if name, err := url.PathUnescape(segments[i]); err == nil && name == q.Info.Name && segments[i+1] == "proxy" {
			if rest = strings.Join(segments[i+2:], "/"); i+2 < len(segments) {
				rest = "/" + rest
			}
			break
		}
	}
	if rest == "" && (q.R.Method == http.MethodGet || q.R.Method == http.MethodHead) {
		loc := q.R.URL.Path + "/"
		if q.R.URL.RawQuery != "" {
			loc += "?" + q.R.URL.RawQuery
		}
		q.W.Header().Set("Location", loc)
		q.W.WriteHeader(http.StatusMovedPermanently)
		return "", true
	}
	if !strings.HasPrefix(rest, "/") {
		rest = "/" + rest
	}
	if q.R.URL.RawQuery != "" {
		rest += "?" + q.R.URL.RawQuery
	}
	return rest, false
}

// splitProxyName reads a proxy's name: "name", "name:port" or
// "scheme:name:port", as Kubernetes' SplitSchemeNamePort; the scheme
// is http unless named.
func splitProxyName(q *apiserver.Request) (scheme, name, port string, ok bool) {
	scheme, name, port, ok = utilnet.SplitSchemeNamePort(q.Info.Name)
	if scheme == "" {
		scheme = "http"
	}
	if !ok {
		q.Fail(apierrors.NewBadRequest(fmt.Sprintf("invalid %s request %q", strings.ToLower(q.Storage.Resource().Kind), q.Info.Name)))
	}
	return scheme, name, port, ok
}

// forwardToKubelet sends the request, with its body, to path on node's
// kubelet, and streams the answer back.
func forwardToKubelet(q *apiserver.Request, node *corev1.Node, path string) {
	body, ok := proxyBody(q)
	if !ok {
		return
	}
	header := proxyHeader(q)
	header.Set(kubeletNodeHeader, node.Name)
	resp, err := dialKubelet(q.Context(), q.Kubelet(), node, q.R.Method, path, body, header)
	if err != nil {
		q.Fail(apierrors.NewServiceUnavailable(fmt.Sprintf("cannot reach the kubelet of node %s: %v", node.Name, err)))
		return
	}
	writeProxied(q, resp)
}

// forwardToPod sends the request to the pod's ip and port, path below
// it, through the pod's node. As Kubernetes' proxy handler does,
// apimachinery's proxy.Transport rewrites an HTML answer's links and a
// redirect's Location that point into the pod to go through the proxy
// again: <a href="/docs"> from pod web comes back as
// <a href="/api/v1/namespaces/default/pods/web/proxy/docs">.
func forwardToPod(q *apiserver.Request, node *corev1.Node, scheme, ip, port, path string) {
	body, ok := proxyBody(q)
	if !ok {
		return
	}
	req, err := http.NewRequestWithContext(q.Context(), q.R.Method, scheme+"://"+net.JoinHostPort(ip, port)+path, bytes.NewReader(body))
	if err != nil {
		q.Fail(apierrors.NewBadRequest(err.Error()))
		return
	}
	req.Header = proxyHeader(q)
	below, _, _ := strings.Cut(path, "?")
	t := &proxy.Transport{PathPrepend: strings.TrimSuffix(q.R.URL.EscapedPath(), below), RoundTripper: throughNode{q.Kubelet(), node}}
	resp, err := t.RoundTrip(req)
	if err != nil {
		q.Fail(err) // 503 error trying to reach service: dial tcp 10.244.1.5:8080: connect: connection refused
		return
	}
	writeProxied(q, resp)
}

// throughNode carries a request for a pod's IP to the kubelet of the
// pod's node, whose route to the pod network sends it on
// (kubelet/podnetwork_route.go).
type throughNode struct {
	kubelet *kubeletclient.Client
	node    *corev1.Node
}

func (n throughNode) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
	}
	path := podNetworkRoute + req.URL.Scheme + "/" + req.URL.Hostname() + "/" + req.URL.Port() + req.URL.EscapedPath()
	if req.URL.RawQuery != "" {
		path += "?" + req.URL.RawQuery
	}
	resp, err := dialKubelet(req.Context(), n.kubelet, n.node, req.Method, path, body, req.Header)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the kubelet of node %s: %w", n.node.Name, err)
	}
	if msg := resp.Header.Get(podNetworkErrorHeader); msg != "" {
		resp.Body.Close()
		return nil, errors.New(msg) // the pod could not be reached: its dial error
	}
	return resp, nil
}

// kubeletNodeHeader names the node a request to a kubelet is for
// (kubelet/server's NodeHeader): one kubelet process may run many nodes
// on one port (`kubelet --nodes N`), and a node's /stats/summary and
// /metrics/* are its own. A real kubelet, one node, ignores it.
const kubeletNodeHeader = "X-Mkube-Node-Name"

// podNetworkRoute and podNetworkErrorHeader are the kubelet's route to
// its pods (kubelet/podnetwork_route.go) and the header its answer has
// when the pod could not be reached, rather than the pod's own answer.
const (
	podNetworkRoute       = "/mkube/podnetwork/"
	podNetworkErrorHeader = "X-Mkube-Pod-Network-Error"
)

// proxyBody reads the request's body, refusing one too big to forward.
func proxyBody(q *apiserver.Request) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(q.R.Body, maxProxyBody+1))
	switch {
	case err != nil:
		q.Fail(apierrors.NewBadRequest(fmt.Sprintf("read body: %v", err)))
		return nil, false
	case len(body) > maxProxyBody:
		q.Fail(apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("a proxied request body is limited to %d bytes", maxProxyBody)))
		return nil, false
	}
	return body, true
}

// proxyHeader is what of the client's header goes on.
func proxyHeader(q *apiserver.Request) http.Header {
	header := http.Header{}
	for _, h := range []string{"Content-Type", "Accept"} {
		if v := q.R.Header.Get(h); v != "" {
			header.Set(h, v)
		}
	}
	return header
}

// writeProxied streams the answer back to the client.
func writeProxied(q *apiserver.Request, resp *http.Response) {
	defer resp.Body.Close()
	for _, h := range []string{"Content-Type", "Location"} {
		if v := resp.Header.Get(h); v != "" {
			q.W.Header().Set(h, v)
		}
	}
	q.W.WriteHeader(resp.StatusCode)
	streamFlushing(q.W, resp.Body)
}

var nodeProxySubresource = apiserver.Subresource{Name: "proxy", Kind: "NodeProxyOptions", Verbs: proxyVerbs, AnyMethod: true, Serve: serveNodeProxy}

// serveNodeProxy forwards to the kubelet of the node, at the address and
// port the node reports, or the port its name gives (node01:10250).
func serveNodeProxy(q *apiserver.Request) {
	_, name, port, ok := splitProxyName(q)
	if !ok {
		return
	}
	obj, err := q.Storage.Get(q.Context(), "", name)
	if err != nil {
		q.Fail(err)
		return
	}
	node := obj.(*corev1.Node)
	if port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 {
			q.Fail(apierrors.NewBadRequest(fmt.Sprintf("invalid node request %q: port %q", q.Info.Name, port)))
			return
		}
		node = node.DeepCopy()
		node.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(n)
	}
	path, redirected := proxyPath(q)
	if !redirected {
		forwardToKubelet(q, node, path)
	}
}
