package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// proxyManifest: two nginx pods behind a Service whose port 8080 is the
// pods' 80, and agnhost's porter, Kubernetes' proxy test server.
const proxyManifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports:
        - {containerPort: 80, name: http}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 8080, targetPort: http}
---
apiVersion: v1
kind: Pod
metadata:
  name: porter
spec:
  containers:
  - name: agnhost
    image: registry.k8s.io/e2e-test-images/agnhost:2.53
    command: ["/agnhost", "porter", "--json-response"]
    env:
    - {name: SERVE_PORT_80, value: foo}
    - {name: SERVE_PORT_8081, value: bar}
    - {name: SERVE_TLS_PORT_443, value: tls}
---
apiVersion: v1
kind: Pod
metadata:
  name: links
spec:
  containers:
  - name: agnhost
    image: registry.k8s.io/e2e-test-images/agnhost:2.53
    command: ["/agnhost", "porter"]
    env:
    - {name: SERVE_PORT_80, value: '<a href="/rewriteme">test</a>'}
`

// The pods/proxy and services/proxy subresources reach what pods serve
// from outside the pod network, through the API server and the pod's
// node (kubelet/podnetwork_route.go): `kubectl get --raw`, and any method
// over plain HTTP, with Kubernetes' redirect, port choice and errors.
func TestProxySubresourcesReachPods(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01", "node02")
	k := newKubectl(t, c)
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "proxy.yaml", proxyManifest))
	k.mustKubectl(t, "rollout", "status", "deployment/web", "--timeout=60s")
	k.mustKubectl(t, "wait", "--for=condition=Ready", "pod/porter", "pod/links", "--timeout=60s")
	web := strings.Fields(k.mustKubectl(t, "get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].metadata.name}"))[0]

	t.Run("kubectl get --raw through a pod and a service", func(t *testing.T) {
		for _, path := range []string{
			"/api/v1/namespaces/default/pods/" + web + "/proxy/", // the first declared port, 80
			"/api/v1/namespaces/default/pods/" + web + ":80/proxy/index.html",
			"/api/v1/namespaces/default/services/web:http/proxy/", // by name
			"/api/v1/namespaces/default/services/web:8080/proxy/", // by number
			"/api/v1/namespaces/default/services/http:web:http/proxy/",
		} {
			if out := k.mustKubectl(t, "get", "--raw", path); !strings.Contains(out, "<title>Welcome to nginx!</title>") {
				t.Errorf("%s: %q, want nginx's page", path, out)
			}
		}
		// porter declares no port: 80 by default, or the name's.
		if out := k.mustKubectl(t, "get", "--raw", "/api/v1/namespaces/default/pods/porter/proxy/some/path"); out != `{"Method":"GET","Body":"foo"}` {
			t.Errorf("porter on 80: %q", out)
		}
		if out := k.mustKubectl(t, "get", "--raw", "/api/v1/namespaces/default/pods/porter:8081/proxy/"); out != `{"Method":"GET","Body":"bar"}` {
			t.Errorf("porter on 8081: %q", out)
		}
		// An HTML page's links into the pod come back through the proxy.
		if out := k.mustKubectl(t, "get", "--raw", "/api/v1/namespaces/default/pods/links:80/proxy/"); out != `<a href="/api/v1/namespaces/default/pods/links:80/proxy/rewriteme">test</a>` {
			t.Errorf("links' page through the proxy: %q", out)
		}
		// Over https (the pod's certificate is not verified, as Kubernetes does).
		if out := k.mustKubectl(t, "get", "--raw", "/api/v1/namespaces/default/pods/https:porter:443/proxy/"); out != `{"Method":"GET","Body":"tls"}` {
			t.Errorf("porter on 443 over TLS: %q", out)
		}
	})

	t.Run("every method reaches the pod, and a bare proxy path is redirected", func(t *testing.T) {
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		do := func(method, path string) (int, string, http.Header) {
			req, _ := http.NewRequest(method, c.URL+path, nil)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b), resp.Header
		}
		for _, m := range []string{"DELETE", "GET", "OPTIONS", "PATCH", "POST", "PUT"} {
			if code, body, _ := do(m, "/api/v1/namespaces/default/pods/porter/proxy/some/path/with/"+m); code != 200 || body != `{"Method":"`+m+`","Body":"foo"}` {
				t.Errorf("%s through the pod: %d %q", m, code, body)
			}
		}
		if code, body, _ := do("HEAD", "/api/v1/namespaces/default/pods/porter/proxy/x"); code != 200 || body != "" {
			t.Errorf("HEAD: %d %q", code, body)
		}
		for _, m := range []string{"GET", "HEAD"} {
			code, _, h := do(m, "/api/v1/namespaces/default/pods/porter/proxy?method="+m)
			if want := "/api/v1/namespaces/default/pods/porter/proxy/?method=" + m; code != http.StatusMovedPermanently || h.Get("Location") != want {
				t.Errorf("%s of a bare proxy path: %d Location %q, want 301 %q", m, code, h.Get("Location"), want)
			}
		}
		if code, body, _ := do("POST", "/api/v1/namespaces/default/pods/porter/proxy?method=POST"); code != 200 || body != `{"Method":"POST","Body":"foo"}` {
			t.Errorf("POST of a bare proxy path: %d %q", code, body)
		}
	})

	t.Run("what cannot be proxied says why", func(t *testing.T) {
		k.mustKubectl(t, "create", "service", "clusterip", "empty", "--tcp=80:80")
		for _, tc := range []struct{ path, want string }{
			{"/api/v1/namespaces/default/services/empty/proxy/", `no endpoints available for service "empty"`},
			{"/api/v1/namespaces/default/services/web:9999/proxy/", `no service port 9999 found for service "web"`},
			{"/api/v1/namespaces/default/services/web/proxy/", `no endpoints available for service "web"`}, // its port has a name: it must be given
			{"/api/v1/namespaces/default/pods/nope/proxy/", `pods "nope" not found`},
			{"/api/v1/namespaces/default/pods/ftp:porter:80/proxy/", `invalid pod request "ftp:porter:80"`},
		} {
			_, errOut, code := k.kubectl(t, "get", "--raw", tc.path)
			if code == 0 || !strings.Contains(errOut, tc.want) {
				t.Errorf("%s: exit %d %q, want %q", tc.path, code, errOut, tc.want)
			}
		}
		// Nothing listens on 8082: the node's dial error comes back.
		testserver.EventuallyWithin(t, 10*time.Second, "a refused port", func() (bool, string) {
			_, errOut, code := k.kubectl(t, "get", "--raw", "/api/v1/namespaces/default/pods/porter:8082/proxy/")
			return code != 0 && strings.Contains(errOut, "connection refused"), errOut
		})
	})
}
