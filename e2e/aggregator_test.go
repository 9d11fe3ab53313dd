package e2e

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// Kubernetes' sample-apiserver behind the API server, as the Aggregator
// conformance spec deploys it: a Deployment of sample-apiserver (with
// its etcd beside it) whose service account may delegate authentication
// and authorization and read extension-apiserver-authentication, a
// Service, and an APIService for wardle.example.com/v1alpha1 with the
// CA of its serving certificate. Once the discovery check passes, the
// real kubectl discovers flunders and creates, lists and deletes them
// through the API server, which proxies each request as the user it
// authenticated; without the APIService, the group is gone.
func TestAnAggregatedAPIServerServesItsGroupThroughTheAPIServer(t *testing.T) {
	t.Parallel()
	// The sample-apiserver reaches the API server through
	// kubernetes.default.svc, whose endpoint is the host's address (an
	// EndpointSlice may not hold a loopback one), and the components run
	// with least privilege, under Node,RBAC.
	c := startClusterWith(t, clusterFlags{secure: true, apiserver: []string{"--bind-address", "0.0.0.0"}}, kubeletNode{name: "node01"})
	k := newKubectl(t, c)
	k.mustKubectl(t, "create", "namespace", "wardle")
	ca, cert, key := webhookCertificates(t, "sample-api.wardle.svc")
	k.mustKubectl(t, "create", "secret", "generic", "sample-apiserver-secret", "-n", "wardle",
		"--from-file=tls.crt="+k.manifest(t, "tls.crt", cert), "--from-file=tls.key="+k.manifest(t, "tls.key", key))
	k.mustKubectl(t, "create", "clusterrolebinding", "wardler:auth-delegator", "--clusterrole=system:auth-delegator", "--serviceaccount=wardle:default")
	k.mustKubectl(t, "create", "rolebinding", "wardler-auth-reader", "-n", "kube-system",
		"--role=extension-apiserver-authentication-reader", "--serviceaccount=wardle:default")
	k.mustKubectl(t, "create", "clusterrole", "sample-apiserver-reader", "--verb=get,list,watch", "--resource=namespaces")
	k.mustKubectl(t, "create", "clusterrolebinding", "wardler:sample-apiserver-reader", "--clusterrole=sample-apiserver-reader", "--serviceaccount=wardle:default")
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "sample-apiserver.yaml", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: sample-apiserver-deployment
  namespace: wardle
spec:
  replicas: 1
  selector:
    matchLabels: {apiserver: "true"}
  template:
    metadata:
      labels: {app: sample-apiserver, apiserver: "true"}
    spec:
      containers:
      - name: sample-apiserver
        image: registry.k8s.io/e2e-test-images/sample-apiserver:1.29.2
        args: ["--etcd-servers=http://127.0.0.1:2379", "--tls-cert-file=/apiserver.local.config/certificates/tls.crt",
          "--tls-private-key-file=/apiserver.local.config/certificates/tls.key", "--audit-log-path=-", "--audit-log-maxage=0", "--audit-log-maxbackup=0"]
        readinessProbe:
          httpGet: {scheme: HTTPS, port: 443, path: /readyz}
          periodSeconds: 1
        volumeMounts:
        - {name: apiserver-certs, mountPath: /apiserver.local.config/certificates, readOnly: true}
      - name: etcd
        image: registry.k8s.io/etcd:3.7.0-0
        command: ["/usr/local/bin/etcd", "--listen-client-urls", "http://127.0.0.1:2379", "--advertise-client-urls", "http://127.0.0.1:2379"]
      volumes:
      - name: apiserver-certs
        secret: {secretName: sample-apiserver-secret}
---
apiVersion: v1
kind: Service
metadata:
  name: sample-api
  namespace: wardle
spec:
  selector: {apiserver: "true"}
  ports:
  - {port: 7443, targetPort: 443}
`))
	if _, errOut, code := k.kubectl(t, "rollout", "status", "deployment/sample-apiserver-deployment", "-n", "wardle", "--timeout=60s"); code != 0 {
		logs, _, _ := k.kubectl(t, "logs", "-n", "wardle", "deployment/sample-apiserver-deployment", "-c", "sample-apiserver", "--previous")
		t.Fatalf("the sample-apiserver is not ready: %s\nits log:\n%s", errOut, logs)
	}
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "apiservice.yaml", fmt.Sprintf(`apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1alpha1.wardle.example.com
spec:
  group: wardle.example.com
  version: v1alpha1
  service: {namespace: wardle, name: sample-api, port: 7443}
  caBundle: %s
  groupPriorityMinimum: 2000
  versionPriority: 200
`, base64.StdEncoding.EncodeToString([]byte(ca)))))
	testserver.EventuallyWithin(t, 30*time.Second, "the APIService is available", func() (bool, string) {
		out := k.mustKubectl(t, "get", "apiservice", "v1alpha1.wardle.example.com", "-o",
			"jsonpath={.status.conditions[0].status} {.status.conditions[0].reason}: {.status.conditions[0].message}")
		return out == "True Passed: all checks passed", out
	})

	// Discovery: the group in /apis, its resources from the aggregated
	// server, in the aggregated document kubectl reads.
	if out := k.mustKubectl(t, "api-resources", "--api-group=wardle.example.com"); !strings.Contains(out, "flunders") || !strings.Contains(out, "fischers") {
		t.Fatalf("kubectl api-resources --api-group=wardle.example.com:\n%s", out)
	}
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "flunder.yaml", `apiVersion: wardle.example.com/v1alpha1
kind: Flunder
metadata:
  name: my-flunder
  namespace: default
  labels: {sample-label: "true"}
`))
	if got := k.mustKubectl(t, "get", "flunders", "-n", "default", "-o", "jsonpath={.items[*].metadata.name}"); got != "my-flunder" {
		t.Errorf("kubectl get flunders: %q, want my-flunder", got)
	}
	if _, errOut, code := k.kubectl(t, "get", "flunder", "nope", "-n", "default"); code == 0 ||
		!strings.Contains(errOut, `flunders.wardle.example.com "nope" not found`) {
		t.Errorf("a missing flunder: exit %d, %s", code, errOut)
	}
	// The aggregated server refuses a flunder in a namespace the cluster
	// does not have: it asked the API server.
	if _, errOut, code := k.kubectl(t, "create", "-f", k.manifest(t, "lost.yaml", strings.Replace(
		"apiVersion: wardle.example.com/v1alpha1\nkind: Flunder\nmetadata: {name: lost, namespace: NS}\n", "NS", "nowhere", 1))); code == 0 ||
		!strings.Contains(errOut, `namespaces "nowhere" not found`) {
		t.Errorf("a flunder in a missing namespace: exit %d, %s", code, errOut)
	}
	k.mustKubectl(t, "delete", "flunder", "my-flunder", "-n", "default")
	if got := k.mustKubectl(t, "get", "flunders", "-n", "default", "-o", "name"); got != "" {
		t.Errorf("after the delete, kubectl get flunders: %q", got)
	}

	k.mustKubectl(t, "delete", "apiservice", "v1alpha1.wardle.example.com")
	testserver.EventuallyWithin(t, 20*time.Second, "without its APIService, the group is gone", func() (bool, string) {
		_, errOut, code := k.kubectl(t, "get", "--raw", "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders")
		return code != 0 && strings.Contains(errOut, "NotFound"), errOut
	})
}
