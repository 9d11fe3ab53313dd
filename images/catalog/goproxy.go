package catalog

import (
	"context"
	"io"
	"net"
	"net/http"

	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
)

// goproxyImage is registry.k8s.io/goproxy (k8s.gcr.io/goproxy before),
// the image of the Kubernetes docs' TCP liveness and readiness probe
// example: an HTTP proxy (elazarl/goproxy) listening on 8080, silent
// when it starts.
func goproxyImage() Image {
	proxy := func(ctx context.Context, p *shell.Process, _ []string, _ io.Writer) (int, error) {
		if err := lib.ListenUntilStopped(ctx, p, 8080); err != nil {
			return 137, err
		}
		return agnhostExitOnSignal, nil // a Go binary as PID 1, as agnhost's servers
	}
	return Image{Entrypoint: []string{"/goproxy"}, Ports: []int32{8080},
		Programs: map[string]shell.Program{"goproxy": proxy}, Serve: goproxyServe}
}

// goproxyServe answers as goproxy's NonproxyHandler does any request
// that is not for a proxy (a plain GET / as an httpGet probe sends):
// 500, with http.Error's text/plain body. A proxy request (an absolute
// URL, or CONNECT) would go out to the internet, which a simulated pod
// cannot reach: its dial fails as the real one does in a pod without
// DNS, and goproxy answers the error, also with 500.
func goproxyServe(c Running, _ int32, conn net.Conn) {
	lib.ServeHTTP(conn, lib.Logged(c.Process, "", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect && !r.URL.IsAbs() {
			http.Error(w, "This is a proxy server. Does not respond to non-proxy requests.", http.StatusInternalServerError)
			return
		}
		http.Error(w, "dial tcp: lookup "+r.URL.Hostname()+": no such host", http.StatusInternalServerError)
	}), nil))
}
