package kubelet

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
)

// The route from the control plane to the pod network. On a real
// cluster the API server connects to a pod's IP itself, for the
// pods/proxy and services/proxy subresources (`kubectl get --raw
// /api/v1/namespaces/default/pods/web/proxy/`), over the cluster network
// or a konnectivity agent on the node. mkube's pod IPs exist only inside
// the runtime (network/podnetwork), so the node that hosts the pod carries
// the request, as that agent would:
//
//	ANY /mkube/podnetwork/<http|https>/<pod IP>/<port>/<path>?<query>
//
// is sent to <scheme>://<pod IP>:<port>/<path>?<query> through the
// runtime's PodNetwork (podnetwork.go), and the pod's answer comes back
// as it is. A pod that refuses or does not exist is a 502 with Go's dial
// error, in the body and in the header X-Mkube-Pod-Network-Error (a pod's
// own 502 has none). Over https the pod's certificate is not verified, as Kubernetes'
// API server does not verify a pod's.

const podNetworkRoute = "/mkube/podnetwork/"

func (f *Fleet) servePodNetwork(w http.ResponseWriter, r *http.Request) {
	scheme, ip, portText := r.PathValue("scheme"), r.PathValue("ip"), r.PathValue("port")
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 || net.ParseIP(ip) == nil || scheme != "http" && scheme != "https" {
		http.Error(w, fmt.Sprintf("not a pod address: %s://%s:%s", scheme, ip, portText), http.StatusBadRequest)
		return
	}
	// The path as the client escaped it, after the route's prefix.
	path := strings.TrimPrefix(r.URL.EscapedPath(), podNetworkRoute+scheme+"/"+ip+"/"+portText)
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = scheme, net.JoinHostPort(ip, portText)
			pr.Out.URL.RawPath = path
			pr.Out.URL.Path = r.PathValue("path")
			if !strings.HasPrefix(pr.Out.URL.Path, "/") {
				pr.Out.URL.Path = "/" + pr.Out.URL.Path
			}
			pr.Out.Host = pr.Out.URL.Host
		},
		Transport: &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return f.runtime.dialPod(ctx, ip, port)
		}},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			w.Header().Set("X-Mkube-Pod-Network-Error", err.Error())
			http.Error(w, err.Error(), http.StatusBadGateway)
		},
	}
	proxy.ServeHTTP(w, r)
}
