package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// TestKubeletPortAuthorizesAsKubeadmConfiguresIt: node01's kubelet runs
// as kubeadm configures one (--anonymous-auth=false,
// --authentication-token-webhook, --authorization-mode=Webhook), on a
// least-privilege cluster where it asks the API server as
// system:node:node01. A scraper's curl without credentials is 401; a
// ServiceAccount token RBAC gives nothing is 403, in the kubelet's words;
// one bound to a ClusterRole granting get on nodes/metrics reads
// /metrics/resource, and not /stats/summary (nodes/stats). node02's
// kubelet keeps the kubelet's command-line defaults (anonymous,
// AlwaysAllow): an admin reads it through the API server's node proxy.
// The port is HTTPS, its certificate self-signed; a client certificate
// the cluster CA signed authenticates as its subject, and the API
// server's own reaches a Webhook kubelet through RBAC.
func TestKubeletPortAuthorizesAsKubeadmConfiguresIt(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not on PATH")
	}
	kubeadm := []string{"--anonymous-auth=false", "--authentication-token-webhook", "--authorization-mode", "Webhook"}
	c := startClusterWith(t, clusterFlags{secure: true}, kubeletNode{name: "node01", flags: kubeadm}, kubeletNode{name: "node02"})
	k := newKubectl(t, c)
	var port string
	testserver.EventuallyWithin(t, 60*time.Second, "node01 reports its kubelet's port", func() (bool, string) {
		port, _, _ = k.kubectl(t, "get", "node", "node01", "-o", "jsonpath={.status.daemonEndpoints.kubeletEndpoint.Port}")
		return port != "" && port != "0", port
	})
	kubelet := "https://127.0.0.1:" + port

	if code, body := curlKubelet(t, "", kubelet+"/metrics/resource"); code != 401 || body != "Unauthorized" {
		t.Errorf("anonymous GET /metrics/resource: %d %q, want 401 Unauthorized", code, body)
	}
	if code, body := curlKubelet(t, "not-a-token", kubelet+"/healthz"); code != 401 || body != "Unauthorized" {
		t.Errorf("GET /healthz with a forged token: %d %q, want 401 Unauthorized", code, body)
	}

	k.mustKubectl(t, "create", "serviceaccount", "stranger")
	k.mustKubectl(t, "create", "serviceaccount", "scraper")
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "rbac.yaml", `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: node-metrics-reader
rules:
- apiGroups: [""]
  resources: [nodes/metrics]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: scraper-node-metrics
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: node-metrics-reader}
subjects:
- {kind: ServiceAccount, name: scraper, namespace: default}
`))
	stranger := strings.TrimSpace(k.mustKubectl(t, "create", "token", "stranger"))
	scraper := strings.TrimSpace(k.mustKubectl(t, "create", "token", "scraper"))

	code, body := curlKubelet(t, stranger, kubelet+"/metrics/resource")
	if want := "Forbidden (user=system:serviceaccount:default:stranger, verb=get, resource=nodes, subresource=metrics)"; code != 403 || body != want {
		t.Errorf("GET /metrics/resource as a ServiceAccount without RBAC: %d %q, want 403 %q", code, body, want)
	}
	// RBAC reaches the API server's authorizer through its informers: the
	// binding may take a moment (and a denial is kept 30 s by the kubelet).
	testserver.EventuallyWithin(t, 60*time.Second, "the scraper reads node01's /metrics/resource", func() (bool, string) {
		code, body = curlKubelet(t, scraper, kubelet+"/metrics/resource")
		return code == 200 && strings.Contains(body, "node_cpu_usage_seconds_total"), fmt.Sprint(code, " ", body)
	})
	code, body = curlKubelet(t, scraper, kubelet+"/stats/summary")
	if want := "Forbidden (user=system:serviceaccount:default:scraper, verb=get, resource=nodes, subresource=stats)"; code != 403 || body != want {
		t.Errorf("GET /stats/summary with only nodes/metrics: %d %q, want 403 %q", code, body, want)
	}
	code, body = curlKubelet(t, scraper, kubelet+"/nodes/node01/stats/summary")
	if want := "subresource=stats)"; code != 403 || !strings.HasSuffix(body, want) {
		t.Errorf("GET /nodes/node01/stats/summary with only nodes/metrics: %d %q, want 403 ...%q", code, body, want)
	}

	// x509: a client certificate the cluster CA signed (--client-ca-file)
	// is its CN in the groups of its O: the admin's, system:masters, may
	// read anything; the API server's own (kube-apiserver-kubelet-client,
	// RBAC's system:kubelet-api-admin) carries the node proxy to node01.
	admin := []string{"--cert", filepath.Join(c.certDir(), "admin.crt"), "--key", filepath.Join(c.certDir(), "admin.key")}
	if code, body = curlKubelet(t, "", kubelet+"/stats/summary", admin...); code != 200 || !strings.Contains(body, `"nodeName": "node01"`) {
		t.Errorf("GET /stats/summary with the admin's client certificate: %d %.300q, want 200 and node01's summary", code, body)
	}
	if out := k.mustKubectl(t, "get", "--raw", "/api/v1/nodes/node01/proxy/metrics/resource"); !strings.Contains(out, "node_cpu_usage_seconds_total") {
		t.Errorf("an admin's node proxy to node01's /metrics/resource (the API server's client certificate):\n%s", out)
	}
	// logs and exec too: nodes/proxy, which system:kubelet-api-admin grants.
	k.mustKubectl(t, "run", "hello", "--image=busybox", `--overrides={"spec":{"nodeName":"node01"}}`, "--", "sh", "-c", "echo hello; sleep 3600")
	testserver.EventuallyWithin(t, 60*time.Second, "kubectl logs reads hello on node01", func() (bool, string) {
		out, errOut, _ := k.kubectl(t, "logs", "hello")
		return strings.TrimSpace(out) == "hello", out + errOut
	})
	if out, errOut, code := k.kubectl(t, "exec", "hello", "--", "echo", "hi"); code != 0 || strings.TrimSpace(out) != "hi" {
		t.Errorf("kubectl exec hello -- echo hi on node01: %d %q %s", code, out, errOut)
	}

	out := k.mustKubectl(t, "get", "--raw", "/api/v1/nodes/node02/proxy/metrics/resource")
	if !strings.Contains(out, "node_cpu_usage_seconds_total") {
		t.Errorf("an admin's node proxy to node02's /metrics/resource:\n%s", out)
	}
}

// curlKubelet is `curl -k -H "Authorization: Bearer token" url` on a
// kubelet's port, whose certificate signs itself: the status code and
// the body.
func curlKubelet(t *testing.T, token, url string, extra ...string) (int, string) {
	t.Helper()
	args := append([]string{"-sSk", "-w", "\n%{http_code}", url}, extra...)
	if token != "" {
		args = append(args, "-H", "Authorization: Bearer "+token)
	}
	out, err := exec.Command("curl", args...).Output()
	if err != nil {
		t.Fatalf("curl %s: %v", url, err)
	}
	s := string(out)
	i := strings.LastIndex(s, "\n")
	var code int
	fmt.Sscan(s[i+1:], &code)
	return code, s[:max(i, 0)]
}
