package core

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
	"k8s.io/apimachinery/pkg/util/proxy"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/kubeletclient"
)

// pods/<name>/exec, /attach and /portforward (`kubectl exec`, `attach`,
// `port-forward`, `cp`) are streams: the client asks to upgrade its
// connection (SPDY/3.1, or WebSocket), and the API server, which runs
// nothing, hands it to the kubelet of the pod's node, found as for
// pods/log:
//
//	POST /api/v1/namespaces/default/pods/web/exec?command=sh&container=app&stdin=true&stdout=true&tty=true
//	  ─▶ https://<node>:10250/exec/default/web/app?command=sh&input=1&output=1&tty=1
//
// Once the kubelet (and behind it the runtime's streaming server)
// switches protocols, the API server only copies bytes both ways, as
// kube-apiserver's upgrade-aware proxy does. Errors before that are
// Statuses: an unknown container (400), a pod not yet on a node (400), a
// node without a kubelet port (503). The kubelet's own ("container not
// found") come back as it sent them, which kubectl prints after "unable
// to upgrade connection: ".
//
// kubectl 1.32 first tries WebSocket with the v5.channel.k8s.io
// protocol, which kubelets do not speak: the API server translates it
// to SPDY towards the kubelet (pod_exec_websocket.go), as kube-apiserver
// does since 1.30.

var (
	execSubresource = apiserver.Subresource{Name: "exec", Kind: "PodExecOptions", Verbs: []string{"create", "get"},
		Serve: func(q *apiserver.Request) { serveStream(q, "exec") }}
	attachSubresource = apiserver.Subresource{Name: "attach", Kind: "PodAttachOptions", Verbs: []string{"create", "get"},
		Serve: func(q *apiserver.Request) { serveStream(q, "attach") }}
	portForwardSubresource = apiserver.Subresource{Name: "portforward", Kind: "PodPortForwardOptions", Verbs: []string{"create", "get"},
		Serve: func(q *apiserver.Request) { serveStream(q, "portForward") }}
)

// streamOptions are an exec's or attach's query: PodExecOptions.
type streamOptions struct {
	container                  string
	command                    []string
	stdin, stdout, stderr, tty bool
}

func parseStreamOptions(query url.Values) streamOptions {
	flag := func(name string) bool { b, _ := strconv.ParseBool(query.Get(name)); return b }
	return streamOptions{container: query.Get("container"), command: query["command"],
		stdin: flag("stdin"), stdout: flag("stdout"), stderr: flag("stderr"), tty: flag("tty")}
}

// kubeletQuery is the query the kubelet's /exec and /attach take: the
// real kubelet's names (input, output, error, tty).
func (o streamOptions) kubeletQuery() url.Values {
	v := url.Values{}
	for _, c := range o.command {
		v.Add("command", c)
	}
	for name, on := range map[string]bool{"input": o.stdin, "output": o.stdout, "error": o.stderr, "tty": o.tty} {
		if on {
			v.Set(name, "1")
		}
	}
	return v
}

// connectOptions are the query as the options object a CONNECT's
// admission is about: PodExecOptions, PodAttachOptions or
// PodPortForwardOptions, as the client asked (the container not yet
// resolved to the default).
func connectOptions(kind string, o streamOptions, query url.Values) runtime.Object {
	switch kind {
	case "exec":
		return &corev1.PodExecOptions{TypeMeta: metav1.TypeMeta{Kind: "PodExecOptions", APIVersion: "v1"}, Container: o.container,
			Command: o.command, Stdin: o.stdin, Stdout: o.stdout, Stderr: o.stderr, TTY: o.tty}
	case "attach":
		return &corev1.PodAttachOptions{TypeMeta: metav1.TypeMeta{Kind: "PodAttachOptions", APIVersion: "v1"}, Container: o.container,
			Stdin: o.stdin, Stdout: o.stdout, Stderr: o.stderr, TTY: o.tty}
	}
	pf := &corev1.PodPortForwardOptions{TypeMeta: metav1.TypeMeta{Kind: "PodPortForwardOptions", APIVersion: "v1"}}
	for _, list := range query["ports"] {
		for _, p := range strings.Split(list, ",") {
			if n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32); err == nil {
				pf.Ports = append(pf.Ports, int32(n))
			}
		}
	}
	return pf
}

// serveStream proxies an exec, attach or portForward (the kubelet's
// path) to the kubelet of the pod's node.
func serveStream(q *apiserver.Request, kind string) {
	ctx := q.Context()
	query := q.R.URL.Query()
	opts := parseStreamOptions(query)
	// A stream is a CONNECT to admission: webhooks may refuse it.
	if err := q.AdmitConnect(connectOptions(kind, opts, query)); err != nil {
		q.Fail(err)
		return
	}
	obj, err := q.Storage.Get(ctx, q.Info.Namespace, q.Info.Name)
	if err != nil {
		q.Fail(err)
		return
	}
	pod := obj.(*corev1.Pod)
	path := fmt.Sprintf("/%s/%s/%s", kind, pod.Namespace, pod.Name)
	var forward url.Values
	switch kind {
	case "portForward":
		forward = url.Values{}
		if ports := query["ports"]; len(ports) > 0 { // WebSocket names them; SPDY names them per stream
			forward["ports"] = ports
		}
	default:
		if opts.container, err = logContainer(pod, opts.container); err != nil {
			q.Fail(err)
			return
		}
		if kind == "exec" && len(opts.command) == 0 {
			q.Fail(apierrors.NewBadRequest("you must specify at least one command for the container"))
			return
		}
		if !opts.stdin && !opts.stdout && !opts.stderr {
			q.Fail(apierrors.NewBadRequest("you must specify at least one of stdin, stdout, stderr"))
			return
		}
		if opts.tty && opts.stderr {
			opts.stderr = false // a tty has one output stream, as kube-apiserver's validation says
		}
		path += "/" + opts.container
		forward = opts.kubeletQuery()
	}
	node, err := podNode(q, pod) // pod_log.go
	if err != nil {
		q.Fail(err)
		return
	}
	host, err := kubeletHost(ctx, node)
	if err != nil {
		q.Fail(apierrors.NewServiceUnavailable(err.Error()))
		return
	}
	location := &url.URL{Scheme: kubeletclient.Scheme, Host: host, Path: path, RawQuery: forward.Encode()}
	q.Log().Info("proxying a stream to the kubelet", "subresource", q.Info.Subresource,
		"pod", pod.Namespace+"/"+pod.Name, "node", pod.Spec.NodeName, "kubelet", location.String())
	switch {
	case kind == "portForward" && wsstream.IsWebSocketRequestWithTunnelingProtocol(q.R):
		tunnelPortForward(q, location)
		return
	case kind != "portForward" && wsstream.IsWebSocketRequestWithStreamCloseProtocol(q.R):
		translateToSPDY(q, location, opts)
		return
	}
	handler := proxy.NewUpgradeAwareHandler(location, q.Kubelet().Transport(), false, true, proxyResponder{q})
	handler.ServeHTTP(q.W, q.R)
}

// kubeletHost is host:port of the node's kubelet: the first of its
// addresses, in the preferred order (kubeletAddressTypes), at which its
// reported port accepts a connection, as dialKubelet tries them.
func kubeletHost(ctx context.Context, node *corev1.Node) (string, error) {
	port := node.Status.DaemonEndpoints.KubeletEndpoint.Port
	if port == 0 {
		return "", fmt.Errorf("node %s reports no kubelet port", node.Name)
	}
	dialer := net.Dialer{Timeout: 2 * time.Second}
	var lastErr error = fmt.Errorf("node %s reports no address", node.Name)
	for _, t := range kubeletAddressTypes {
		for _, a := range node.Status.Addresses {
			if a.Type != t {
				continue
			}
			host := net.JoinHostPort(a.Address, strconv.Itoa(int(port)))
			conn, err := dialer.DialContext(ctx, "tcp", host)
			if err != nil {
				lastErr = err
				continue
			}
			conn.Close()
			return host, nil
		}
	}
	return "", fmt.Errorf("cannot reach the kubelet of node %s: %w", node.Name, lastErr)
}

// proxyResponder answers a kubelet the proxy cannot reach: 503, as
// kube-apiserver's responder words it.
type proxyResponder struct{ q *apiserver.Request }

func (r proxyResponder) Error(w http.ResponseWriter, req *http.Request, err error) {
	r.q.Fail(apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach service: %v", err)))
}
