package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// A Deployment of two on two nodes behind a Service, and a client pod
// that reaches them by the Service's name and cluster IP.
const servicesAcrossNodes = `apiVersion: apps/v1
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
      topologySpreadConstraints:
      - maxSkew: 1
        topologyKey: kubernetes.io/hostname
        whenUnsatisfiable: DoNotSchedule
        labelSelector:
          matchLabels: {app: web}
      containers:
      - name: netexec
        image: registry.k8s.io/e2e-test-images/agnhost:2.53
        args: ["netexec", "--http-port=8080"]
        readinessProbe:
          httpGet: {path: /hostname, port: 8080}
          periodSeconds: 1
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - name: http
    port: 80
    targetPort: 8080
  - name: udp # netexec's UDP server, on its default port
    port: 80
    protocol: UDP
    targetPort: 8081
---
apiVersion: v1
kind: Pod
metadata:
  name: client
spec:
  nodeName: node01
  containers:
  - name: busybox
    image: busybox:1.36
    command: ["sleep", "3600"]
`

// The pod of Kubernetes' OIDC discovery spec: it verifies its projected
// token against the issuer's discovery, fetched through
// kubernetes.default.svc with its in-cluster credentials.
const oidcDiscoveryValidator = `apiVersion: v1
kind: Pod
metadata:
  name: oidc-discovery-validator
spec:
  restartPolicy: Never
  containers:
  - name: validator
    image: registry.k8s.io/e2e-test-images/agnhost:2.53
    args: ["test-service-account-issuer-discovery", "--token-path", "/var/run/secrets/tokens/sa-token", "--audience", "oidc-discovery-test"]
    volumeMounts:
    - {name: sa-token, mountPath: /var/run/secrets/tokens, readOnly: true}
  volumes:
  - name: sa-token
    projected:
      sources:
      - serviceAccountToken: {path: sa-token, expirationSeconds: 600, audience: oidc-discovery-test}
`

// Services work as kube-proxy and CoreDNS make them work: the kubelets
// play kube-proxy (their nodes' identities read the EndpointSlices by
// system:node-proxier), and the runtimes answer the cluster DNS at
// 10.96.0.10, the kube-dns Service's address. A pod reaches the
// Service's endpoints on both nodes by its name and its cluster IP (over
// TCP and UDP), a
// pod reaches the API server by kubernetes.default, and a Service
// without endpoints refuses. A pod verifies its token by the issuer's
// OIDC discovery, through the same Service.
func TestServicesByNameAndClusterIP(t *testing.T) {
	t.Parallel()
	// The secure port on every interface: the kubernetes Service's
	// endpoint is the host's address (--advertise-address's default), as
	// an EndpointSlice may not hold a loopback one.
	c := startClusterWith(t, clusterFlags{secure: true, apiserver: []string{"--bind-address", "0.0.0.0"}},
		kubeletNode{name: "node01"}, kubeletNode{name: "node02"})
	k := newKubectl(t, c)
	if ip := k.mustKubectl(t, "get", "service", "-n", "kube-system", "kube-dns", "-o", "jsonpath={.spec.clusterIP}"); ip != "10.96.0.10" {
		t.Errorf("kube-system/kube-dns's cluster IP = %q, want 10.96.0.10", ip)
	}
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "web.yaml", servicesAcrossNodes))
	k.mustKubectl(t, "rollout", "status", "deployment/web", "--timeout=60s")
	k.mustKubectl(t, "wait", "--for=condition=Ready", "pod/client", "--timeout=60s")
	nodes := k.mustKubectl(t, "get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].spec.nodeName}")
	if !strings.Contains(nodes, "node01") || !strings.Contains(nodes, "node02") {
		t.Fatalf("web's pods are on %q, want one on each node", nodes)
	}
	clusterIP := k.mustKubectl(t, "get", "service", "web", "-o", "jsonpath={.spec.clusterIP}")

	out := k.mustKubectl(t, "exec", "client", "--", "nslookup", "web")
	if !strings.Contains(out, "Name:\tweb.default.svc.cluster.local\nAddress: "+clusterIP+"\n") {
		t.Errorf("nslookup web:\n%s\nwant %s", out, clusterIP)
	}
	// Both endpoints answer, through the name and through the cluster
	// IP: the kubelets' rules follow the EndpointSlice.
	for _, url := range []string{"http://web/hostname", "http://" + clusterIP + "/hostname"} {
		seen := map[string]bool{}
		testserver.EventuallyWithin(t, 30*time.Second, "both endpoints answer "+url, func() (bool, string) {
			out, errOut, _ := k.kubectl(t, "exec", "client", "--", "sh", "-c", "for i in 1 2 3 4 5 6 7 8; do wget -qO- "+url+"; echo; done")
			for _, h := range strings.Fields(out) {
				seen[h] = true
			}
			return len(seen) == 2, out + errOut
		})
	}
	// The Service's UDP port of the same number reaches netexec's UDP
	// server on both nodes, a datagram each way.
	seen := map[string]bool{}
	testserver.EventuallyWithin(t, 30*time.Second, "both endpoints answer over UDP", func() (bool, string) {
		out, errOut, _ := k.kubectl(t, "exec", "client", "--", "sh", "-c", "for i in 1 2 3 4; do echo hostName | nc -u -w 1 "+clusterIP+" 80; echo; done")
		for _, h := range strings.Fields(out) {
			seen[h] = true
		}
		return len(seen) == 2, out + errOut
	})
	token := "$(cat /var/run/secrets/kubernetes.io/serviceaccount/token)"
	out, errOut, _ := k.kubectl(t, "exec", "client", "--", "sh", "-c",
		`curl -sS --cacert /var/run/secrets/kubernetes.io/serviceaccount/ca.crt -H "Authorization: Bearer `+token+`" https://kubernetes.default.svc/api/v1/namespaces/default/pods/client`)
	if !strings.Contains(out, `cannot get resource \"pods\"`) || !strings.Contains(out, "system:serviceaccount:default:default") {
		t.Errorf("the API server through kubernetes.default.svc, as the default service account:\n%s%s", out, errOut)
	}

	// The issuer's OIDC discovery, which every service account may read,
	// verifies a projected token.
	if out := k.mustKubectl(t, "get", "--raw", "/.well-known/openid-configuration"); !strings.Contains(out, `"jwks_uri":"https://kubernetes.default.svc.cluster.local/openid/v1/jwks"`) {
		t.Errorf("/.well-known/openid-configuration = %s", out)
	}
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "oidc.yaml", oidcDiscoveryValidator))
	testserver.EventuallyWithin(t, 60*time.Second, "the OIDC validator to succeed", func() (bool, string) {
		phase := k.mustKubectl(t, "get", "pod", "oidc-discovery-validator", "-o", "jsonpath={.status.phase}")
		return phase == "Succeeded", phase
	})
	if out := k.mustKubectl(t, "logs", "oidc-discovery-validator"); !strings.Contains(out, "OK: Validated signature on JWT") {
		t.Errorf("the OIDC validator's log:\n%s", out)
	}

	k.mustKubectl(t, "scale", "deployment/web", "--replicas=0")
	testserver.EventuallyWithin(t, 30*time.Second, "a Service without endpoints refuses", func() (bool, string) {
		_, errOut, code := k.kubectl(t, "exec", "client", "--", "wget", "-qO-", "-T", "2", "http://web/")
		return code == 1 && strings.Contains(errOut, "Connection refused"), errOut
	})
	if _, errOut, code := k.kubectl(t, "exec", "client", "--", "nslookup", "nosuch"); code != 1 || !strings.Contains(errOut, "exit code 1") {
		t.Errorf("nslookup of an unknown name: exit %d %s", code, errOut)
	}
	log, _ := os.ReadFile(c.logs["kubelet-node01"])
	if !strings.Contains(string(log), "service proxy: rules set") {
		t.Errorf("node01's kubelet did not log its Service rules:\n%s", log)
	}
}
