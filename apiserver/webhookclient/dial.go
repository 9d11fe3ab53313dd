package webhookclient

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"

	"github.com/mkube/mkube/apiserver/kubeletclient"
)

// Reaching a webhook behind a Service.
//
// kube-apiserver sends a service webhook's request to
// https://<service>.<namespace>.svc:<port><path> and, by default, dials
// the Service's ClusterIP, which kube-proxy on the API server's host
// turns into one of its pods' IPs (with --enable-aggregator-routing it
// picks a ready endpoint's pod IP itself); where the control plane
// cannot route to pods, the konnectivity proxy carries the connection
// through an agent on the nodes. mkube's pod IPs are simulated: only a
// node's runtime can reach a pod (network/podnetwork). So the API server
// does what --enable-aggregator-routing and konnectivity do together:
//
//	1. the Service and its port → the targetPort, and the EndpointSlices
//	   labelled kubernetes.io/service-name=<service> → a ready endpoint
//	   (at random, as the endpoint resolver picks), its pod and its node;
//	2. the node's kubelet, at the address and port the Node reports, is
//	   asked to port-forward to the pod (POST /portForward/<ns>/<pod>,
//	   upgraded to SPDY/3.1, portforward.k8s.io): the kubelet hands the
//	   stream to its runtime, which connects it to the pod's port;
//	3. the stream pair (error and data) for that port is the TCP
//	   connection, over which the client speaks TLS to the webhook,
//	   checking its certificate against clientConfig.caBundle for the
//	   name <service>.<namespace>.svc.
//
// A Service of type ExternalName is dialed at its externalName and the
// port asked, as kube-aggregator's and the webhooks' resolvers do: how a
// server outside the cluster, such as a metrics-server on the host, is
// registered (e2e/metricsserver_upstream_test.go).
//
// The kubelet is reached over HTTPS with the API server's
// --kubelet-client-certificate (package kubeletclient), as pods/log and
// exec reach it: the Objects given by WithObjects say how, when they have
// a Kubelet method (apiserver.Server's do).

// kubeletAddressTypes is kube-apiserver's default
// --kubelet-preferred-address-types.
var kubeletAddressTypes = []corev1.NodeAddressType{corev1.NodeHostName, corev1.NodeInternalDNS, corev1.NodeInternalIP,
	corev1.NodeExternalDNS, corev1.NodeExternalIP}

var (
	services       = corev1.SchemeGroupVersion.WithResource("services")
	endpointSlices = discoveryv1.SchemeGroupVersion.WithResource("endpointslices")
	nodes          = corev1.SchemeGroupVersion.WithResource("nodes")
)

// target is a pod that serves a Service's port, or, for an ExternalName
// Service, the address that does.
type target struct {
	namespace, pod, node string
	addr                 string // externalName:port of an ExternalName Service
	port                 int32
}

// dialService connects to port of the Service namespace/name.
func dialService(ctx context.Context, c Objects, namespace, name string, port int32) (net.Conn, error) {
	t, err := resolveService(ctx, c, namespace, name, port)
	if err != nil {
		return nil, err
	}
	if t.addr != "" { // a server outside the cluster: dialed as it is
		return (&net.Dialer{Timeout: kubeletclient.DialTimeout}).DialContext(ctx, "tcp", t.addr)
	}
	obj, err := c.Get(ctx, nodes, "", t.node)
	if err != nil {
		return nil, fmt.Errorf("node %s of pod %s/%s: %w", t.node, t.namespace, t.pod, err)
	}
	var kc *kubeletclient.Client
	if k, ok := c.(interface{ Kubelet() *kubeletclient.Client }); ok {
		kc = k.Kubelet()
	}
	return dialThroughKubelet(ctx, kc, obj.(*corev1.Node), t)
}

// resolveService picks a ready endpoint of the Service's port.
func resolveService(ctx context.Context, c Objects, namespace, name string, port int32) (target, error) {
	obj, err := c.Get(ctx, services, namespace, name)
	if err != nil {
		return target{}, err
	}
	svc := obj.(*corev1.Service)
	var svcPort *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port {
			svcPort = &svc.Spec.Ports[i]
		}
	}
	if svcPort == nil {
		return target{}, apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", port, name))
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return target{addr: net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(port)))}, nil
	}
	slices, err := c.List(ctx, endpointSlices, namespace)
	if err != nil {
		return target{}, err
	}
	var ready []target
	for _, o := range slices {
		s := o.(*discoveryv1.EndpointSlice)
		if s.Labels[discoveryv1.LabelServiceName] != name {
			continue
		}
		var num *int32
		for _, p := range s.Ports {
			if p.Port != nil && (p.Name == nil && svcPort.Name == "" || p.Name != nil && *p.Name == svcPort.Name) {
				num = p.Port
			}
		}
		if num == nil {
			continue
		}
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready || e.TargetRef == nil || e.TargetRef.Kind != "Pod" || e.NodeName == nil {
				continue
			}
			ready = append(ready, target{namespace: e.TargetRef.Namespace, pod: e.TargetRef.Name, node: *e.NodeName, port: *num})
		}
	}
	if len(ready) == 0 {
		return target{}, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name))
	}
	return ready[rand.IntN(len(ready))], nil
}

// dialThroughKubelet opens a port-forward to t through its node's kubelet
// and returns its data stream as the connection.
func dialThroughKubelet(ctx context.Context, kc *kubeletclient.Client, node *corev1.Node, t target) (net.Conn, error) {
	kport := node.Status.DaemonEndpoints.KubeletEndpoint.Port
	if kport == 0 {
		return nil, fmt.Errorf("node %s reports no kubelet port", node.Name)
	}
	var tcp net.Conn
	var err error = fmt.Errorf("node %s reports no address", node.Name)
	var host string
	for _, typ := range kubeletAddressTypes {
		for _, a := range node.Status.Addresses {
			if a.Type == typ && tcp == nil {
				host = net.JoinHostPort(a.Address, strconv.Itoa(int(kport)))
				tcp, err = kc.Dial(ctx, host)
			}
		}
	}
	if tcp == nil {
		return nil, fmt.Errorf("cannot reach the kubelet of node %s: %w", node.Name, err)
	}
	conn, err := upgradeToPortForward(ctx, tcp, host, t)
	if err != nil {
		tcp.Close()
		return nil, err
	}
	return conn, nil
}

// upgradeToPortForward asks the kubelet on tcp to port-forward to t, as
// `kubectl port-forward` asks the API server, and opens the port's
// streams.
func upgradeToPortForward(ctx context.Context, tcp net.Conn, host string, t target) (net.Conn, error) {
	if d, ok := ctx.Deadline(); ok {
		tcp.SetDeadline(d) // the upgrade only; cleared below
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("%s://%s/portForward/%s/%s", kubeletclient.Scheme, host, t.namespace, t.pod), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", spdy.HeaderSpdy31)
	req.Header.Set(httpstream.HeaderProtocolVersion, "portforward.k8s.io")
	if err := req.Write(tcp); err != nil {
		return nil, err
	}
	r := bufio.NewReader(tcp) // may hold the first frames after the 101
	resp, err := http.ReadResponse(r, req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return nil, fmt.Errorf("kubelet port-forward to pod %s/%s: %s: %s", t.namespace, t.pod, resp.Status, body)
	}
	tcp.SetDeadline(time.Time{})
	raw := &bufferedConn{Conn: tcp, r: r}
	session, err := spdy.NewClientConnection(raw)
	if err != nil {
		return nil, err
	}
	headers := http.Header{}
	headers.Set(corev1.PortHeader, strconv.Itoa(int(t.port)))
	headers.Set(corev1.PortForwardRequestIDHeader, "0")
	headers.Set(corev1.StreamType, corev1.StreamTypeError)
	errStream, err := session.CreateStream(headers)
	if err != nil {
		session.Close()
		return nil, err
	}
	errStream.Close() // nothing to send on it
	headers.Set(corev1.StreamType, corev1.StreamTypeData)
	data, err := session.CreateStream(headers)
	if err != nil {
		session.Close()
		return nil, err
	}
	c := &podConn{Conn: raw, session: session, data: data, remote: &podAddr{t}}
	go c.readErrors(errStream) // ends when the kubelet closes the stream, at the latest with the session
	return c, nil
}

// bufferedConn reads what the response's reader already buffered first.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// podConn is one TCP connection to a pod through a kubelet's
// port-forward: the data stream. Its deadlines are the kubelet
// connection's, which carries only this stream. If the kubelet reports
// an error (nothing listens on the pod's port), reads fail with its words.
type podConn struct {
	net.Conn // the connection to the kubelet, for its addresses and deadlines
	session  httpstream.Connection
	data     httpstream.Stream
	remote   net.Addr

	mu     sync.Mutex
	failed error // the kubelet's error, once read
}

func (c *podConn) readErrors(s httpstream.Stream) {
	msg, _ := io.ReadAll(s)
	if len(msg) == 0 {
		return
	}
	c.mu.Lock()
	c.failed = errors.New(string(msg))
	c.mu.Unlock()
	c.data.Reset()
}

func (c *podConn) Read(p []byte) (int, error) {
	n, err := c.data.Read(p)
	if err != nil {
		c.mu.Lock()
		if c.failed != nil {
			err = c.failed
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *podConn) Write(p []byte) (int, error) { return c.data.Write(p) }
func (c *podConn) RemoteAddr() net.Addr        { return c.remote }

// Close ends the data stream and the session, which closes the
// connection to the kubelet.
func (c *podConn) Close() error {
	c.data.Close()
	return c.session.Close()
}

// podAddr names the far end as the pod and port it is.
type podAddr struct{ t target }

func (a *podAddr) Network() string { return "tcp" }
func (a *podAddr) String() string {
	return fmt.Sprintf("pod %s/%s:%d via node %s", a.t.namespace, a.t.pod, a.t.port, a.t.node)
}
