package core

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/mkube/mkube/apiserver"
)

// nodes/<name>/proxy/<path> (`kubectl get --raw
// /api/v1/nodes/node01/proxy/healthz`) forwards a request, any method,
// to the kubelet of the node, at the address and port the node reports,
// and streams its answer back as it is: status, Content-Type and body.
// It is how a client that cannot reach a node's kubelet (it runs in a
// container, or behind the control plane) talks to it anyway; mkube's
// CLI sends its faults this way (kubelet/faults.go). Only the API
// server's own failures are a Status: no such node (404), or a kubelet
// it cannot reach (503).

var nodeProxySubresource = apiserver.Subresource{Name: "proxy", Kind: "NodeProxyOptions",
	Verbs: []string{"create", "delete", "get", "patch", "update"}, Serve: serveNodeProxy}

// maxProxyBody bounds a forwarded request body: what goes to a kubelet
// is a small command, never an upload.
const maxProxyBody = 1 << 20

func serveNodeProxy(q *apiserver.Request) {
	ctx := q.Context()
	obj, err := q.Storage.Get(ctx, "", q.Info.Name)
	if err != nil {
		q.Fail(err)
		return
	}
	node := obj.(*corev1.Node)
	// The path below .../proxy, "/" if none.
	_, rest, _ := strings.Cut(q.R.URL.Path, "/nodes/"+q.Info.Name+"/proxy")
	if !strings.HasPrefix(rest, "/") {
		rest = "/" + rest
	}
	if q.R.URL.RawQuery != "" {
		rest += "?" + q.R.URL.RawQuery
	}
	body, err := io.ReadAll(io.LimitReader(q.R.Body, maxProxyBody+1))
	switch {
	case err != nil:
		q.Fail(apierrors.NewBadRequest(fmt.Sprintf("read body: %v", err)))
		return
	case len(body) > maxProxyBody:
		q.Fail(apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("a proxied request body is limited to %d bytes", maxProxyBody)))
		return
	}
	header := http.Header{}
	if ct := q.R.Header.Get("Content-Type"); ct != "" {
		header.Set("Content-Type", ct)
	}
	resp, err := dialKubelet(ctx, node, q.R.Method, rest, body, header)
	if err != nil {
		q.Fail(apierrors.NewServiceUnavailable(fmt.Sprintf("cannot reach the kubelet of node %s: %v", node.Name, err)))
		return
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		q.W.Header().Set("Content-Type", ct)
	}
	q.W.WriteHeader(resp.StatusCode)
	streamFlushing(q.W, resp.Body)
}
