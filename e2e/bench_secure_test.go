package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/mkube/mkube/apiserver/pki"
	"github.com/mkube/mkube/internal/testserver"
)

// benchSecureClients are the scheduling benchmark's clients on the secure
// port (MKUBE_BENCH_SECURE=1): the user bench, whose certificate the
// cluster's CA signs and whom RBAC lets create nodes and pods and read
// pods (a ClusterRole and its binding, made over the plain port), not a
// member of system:masters, so that every request goes through the
// authorizers (Node, then RBAC). Their transports are client-go's, HTTP/2
// over TLS as the anchor's client-go harness: the 16 creating goroutines
// share one connection, and the watch that times the bindings has its
// own, as an informer in another process would. It returns the creating
// client, the watching one and the URL.
func benchSecureClients(b *testing.B, c *cluster) (creates, watch *http.Client, url string) {
	server := fmt.Sprintf("https://127.0.0.1:%d", c.securePort)
	p, err := pki.Ensure(c.certDir(), []string{"127.0.0.1"}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	bench := pki.Identity{Name: "bench", User: "bench"}
	if err := p.EnsureClient(bench, time.Now()); err != nil {
		b.Fatal(err)
	}
	path, err := p.WriteKubeconfig(bench, server)
	if err != nil {
		b.Fatal(err)
	}
	plain := &http.Client{}
	post(b, plain, c.URL+"/apis/rbac.authorization.k8s.io/v1/clusterroles", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole",
		"metadata":{"name":"bench"},"rules":[{"apiGroups":[""],"resources":["nodes"],"verbs":["create"]},
		{"apiGroups":[""],"resources":["pods"],"verbs":["create","get","list","watch"]}]}`)
	post(b, plain, c.URL+"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding",
		"metadata":{"name":"bench"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"bench"},
		"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"bench"}]}`)
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		b.Fatal(err)
	}
	connection := func() *http.Client {
		tlsConfig, err := rest.TLSConfigFor(cfg)
		if err != nil {
			b.Fatal(err)
		}
		// transport.New's settings, HTTP/2 included; built here rather
		// than by rest.TransportFor, whose cache would share one connection.
		return &http.Client{Transport: utilnet.SetTransportDefaults(&http.Transport{TLSClientConfig: tlsConfig, MaxIdleConnsPerHost: 25})}
	}
	creates, watch = connection(), connection()
	testserver.EventuallyWithin(b, 10*time.Second, "RBAC lets bench list pods over HTTP/2", func() (bool, string) {
		resp, err := creates.Get(server + "/api/v1/pods?limit=1")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK && resp.ProtoMajor == 2, resp.Proto + " " + resp.Status
	})
	return creates, watch, server
}
