package core

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/kubeletclient"
)

// GET pods/<name>/log (`kubectl logs`): the API server does not have the
// logs; the kubelet of the pod's node does. The API server finds the node,
// dials its kubelet at the address and port the node reports, and streams
// the answer through (kube-apiserver does the same, over TLS).

var logSubresource = apiserver.Subresource{Name: "log", Kind: "Pod", Verbs: []string{"get"}, Serve: servePodLog}

// kubeletAddressTypes is kube-apiserver's default
// --kubelet-preferred-address-types: the first that answers wins.
var kubeletAddressTypes = []corev1.NodeAddressType{corev1.NodeHostName, corev1.NodeInternalDNS, corev1.NodeInternalIP, corev1.NodeExternalDNS, corev1.NodeExternalIP}

func servePodLog(q *apiserver.Request) {
	ctx := q.Context()
	obj, err := q.Storage.Get(ctx, q.Info.Namespace, q.Info.Name)
	if err != nil {
		q.Fail(err)
		return
	}
	pod := obj.(*corev1.Pod)
	query := q.R.URL.Query()
	container, err := logContainer(pod, query.Get("container"))
	if err != nil {
		q.Fail(err)
		return
	}
	node, err := podNode(q, pod)
	if err != nil {
		q.Fail(err)
		return
	}
	forward := url.Values{}
	for _, k := range []string{"follow", "previous", "timestamps", "tailLines", "limitBytes", "sinceSeconds"} {
		if v := query.Get(k); v != "" {
			forward.Set(k, v)
		}
	}
	path := fmt.Sprintf("/containerLogs/%s/%s/%s?%s", pod.Namespace, pod.Name, container, forward.Encode())
	resp, err := dialKubelet(ctx, q.Kubelet(), node, http.MethodGet, path, nil, nil)
	if err != nil {
		q.Fail(apierrors.NewServiceUnavailable(fmt.Sprintf("cannot reach the kubelet of node %s: %v", node.Name, err)))
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		q.Fail(apierrors.NewGenericServerResponse(resp.StatusCode, "get", q.Storage.Resource().GroupResource(), pod.Name, strings.TrimSpace(string(msg)), 0, false))
		return
	}
	if wsstream.IsWebSocketRequest(q.R) {
		// The log as WebSocket messages (protocols binary.k8s.io and
		// base64.binary.k8s.io), as kube-apiserver streams any response to
		// a client that asks so: what a browser, or the conformance suite,
		// reads.
		// bufio: the WebSocket copier drops what a Read returns together
		// with io.EOF, as the kubelet's last chunk comes.
		if err := wsstream.NewReader(bufio.NewReader(resp.Body), true, wsstream.NewDefaultReaderProtocols()).Copy(q.W, q.R); err != nil {
			q.Log().Info("pod log over WebSocket ended", "pod", pod.Namespace+"/"+pod.Name, "err", err)
		}
		return
	}
	q.W.Header().Set("Content-Type", "text/plain")
	q.W.WriteHeader(http.StatusOK)
	streamFlushing(q.W, resp.Body)
}

// podNode is the Node the pod is bound to, whose kubelet has what the
// API server has not (logs, the containers themselves); a pod not bound
// yet is a BadRequest, in kube-apiserver's words.
func podNode(q *apiserver.Request, pod *corev1.Pod) (*corev1.Node, error) {
	if pod.Spec.NodeName == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", pod.Name))
	}
	obj, err := q.StorageFor(Nodes.GroupVersionResource()).Get(q.Context(), "", pod.Spec.NodeName)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Node), nil
}

// logContainer picks the container: the one named (an ephemeral one too),
// or the only one.
func logContainer(pod *corev1.Pod, name string) (string, error) {
	var names []string
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		names = append(names, c.Name)
		if c.Name == name {
			return name, nil
		}
	}
	for _, c := range pod.Spec.EphemeralContainers { // `kubectl debug`'s: named, never the default
		if c.Name == name {
			return name, nil
		}
	}
	if name != "" {
		return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", name, pod.Name))
	}
	if len(pod.Spec.Containers) == 1 {
		return pod.Spec.Containers[0].Name, nil
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: [%s]", pod.Name, strings.Join(names, " ")))
}

// dialKubelet sends a request to the node's kubelet, trying the node's
// addresses in the preferred order. path holds the query too; body and
// header (either may be nil) are sent with each attempt, over HTTPS as
// kc says (package kubeletclient).
func dialKubelet(ctx context.Context, kc *kubeletclient.Client, node *corev1.Node, method, path string, body []byte, header http.Header) (*http.Response, error) {
	port := int(node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	if port == 0 {
		return nil, fmt.Errorf("node %s reports no kubelet port", node.Name)
	}
	transport := kc.Transport()
	defer transport.CloseIdleConnections() // a transport per request: keep no connection once the answer is read
	httpClient := &http.Client{Transport: transport}
	var lastErr error = fmt.Errorf("node %s reports no address", node.Name)
	for _, t := range kubeletAddressTypes {
		for _, a := range node.Status.Addresses {
			if a.Type != t {
				continue
			}
			req, err := http.NewRequestWithContext(ctx, method, kubeletclient.Scheme+"://"+net.JoinHostPort(a.Address, strconv.Itoa(port))+path, bytes.NewReader(body))
			if err != nil {
				return nil, err
			}
			if header != nil {
				req.Header = header.Clone()
			}
			resp, err := httpClient.Do(req)
			if err == nil {
				return resp, nil
			}
			lastErr = err
		}
	}
	return nil, lastErr
}

// streamFlushing copies a stream, flushing each chunk (kubectl logs -f).
func streamFlushing(w http.ResponseWriter, r io.Reader) {
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}
