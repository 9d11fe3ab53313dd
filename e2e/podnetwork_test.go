package e2e

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// podNetworkPods: nginx probed where it serves, and where it does not.
const podNetworkPods = `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: nginx
    image: nginx:1.27
    readinessProbe:
      httpGet:
        path: /
        port: 80
      periodSeconds: 2
---
apiVersion: v1
kind: Pod
metadata:
  name: wrong-port
spec:
  containers:
  - name: nginx
    image: nginx:1.27
    readinessProbe:
      httpGet:
        path: /
        port: 8080
      periodSeconds: 2
`

// The kubelet's HTTP probes reach the pods' servers through the runtime's
// pod network, and what answers is what the image serves: nginx logs each
// probe in its access log, from the node's bridge address, as `kubectl
// logs` shows on a real cluster; a port nothing listens on is refused
// with Go's own words.
func TestPodNetworkProbesShowInNginxsAccessLog(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01")
	k := newKubectl(t, c)
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "pods.yaml", podNetworkPods))

	// 10.244.1.1 - - [01/Dec/2026:14:50:35 +0000] "GET / HTTP/1.1" 200 615 "-" "kube-probe/1.32" "-"
	accessLine := regexp.MustCompile(`(?m)^10\.244\.\d+\.1 - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d \+0000\] "GET / HTTP/1\.1" 200 615 "-" "kube-probe/1\.\d+" "-"$`)
	testserver.EventuallyWithin(t, 30*time.Second, "probes in web's log", func() (bool, string) {
		out, _, _ := k.kubectl(t, "logs", "web")
		return len(accessLine.FindAllString(out, -1)) >= 2, out
	})
	testserver.EventuallyWithin(t, 30*time.Second, "web Ready", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "pod", "web", "-o", "jsonpath={.status.containerStatuses[0].ready}")
		return out == "true", out
	})

	ip := k.mustKubectl(t, "get", "pod", "wrong-port", "-o", "jsonpath={.status.podIP}")
	want := `Readiness probe failed: Get "http://` + ip + `:8080/": dial tcp ` + ip + `:8080: connect: connection refused`
	testserver.EventuallyWithin(t, 30*time.Second, "wrong-port's refused probe", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "events", "--field-selector", "involvedObject.name=wrong-port",
			"-o", "jsonpath={range .items[*]}{.message}{\"\\n\"}{end}")
		return ip != "" && strings.Contains(out, want), out
	})
	if out := k.mustKubectl(t, "get", "pod", "wrong-port", "-o", "jsonpath={.status.containerStatuses[0].ready}"); out != "false" {
		t.Errorf("wrong-port ready = %q, want false", out)
	}
}

// podNetworkAcrossNodes: a netexec server on node02 and a netexec
// client on node01.
const podNetworkAcrossNodes = `apiVersion: v1
kind: Pod
metadata:
  name: server
spec:
  nodeName: node02
  containers:
  - name: netexec
    image: registry.k8s.io/e2e-test-images/agnhost:2.53
    args: ["netexec", "--http-port=8080"]
    readinessProbe:
      httpGet: {path: /hostname, port: 8080}
      periodSeconds: 1
---
apiVersion: v1
kind: Pod
metadata:
  name: client
spec:
  nodeName: node01
  containers:
  - name: netexec
    image: registry.k8s.io/e2e-test-images/agnhost:2.53
    args: ["netexec", "--http-port=8080"]
    readinessProbe:
      httpGet: {path: /hostname, port: 8080}
      periodSeconds: 1
`

// Every pod reaches every other pod at its IP, across nodes, without NAT
// (Kubernetes' network model): each kubelet writes its runtime's peer
// address on its Node and routes the other nodes' pod CIDRs to theirs,
// as flannel's daemon does. The kubelets here have their nodes' own
// identities, which may read every Node by mkube:pod-network.
func TestPodsReachEachOtherAcrossNodes(t *testing.T) {
	t.Parallel()
	c := startClusterWith(t, clusterFlags{secure: true}, kubeletNode{name: "node01"}, kubeletNode{name: "node02"})
	k := newKubectl(t, c)
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "pods.yaml", podNetworkAcrossNodes))
	k.mustKubectl(t, "wait", "--for=condition=Ready", "pod/server", "pod/client", "--timeout=60s")
	serverIP := k.mustKubectl(t, "get", "pod", "server", "-o", "jsonpath={.status.podIP}")
	clientIP := k.mustKubectl(t, "get", "pod", "client", "-o", "jsonpath={.status.podIP}")
	for _, node := range []string{"node01", "node02"} {
		peer := k.mustKubectl(t, "get", "node", node, "-o", `jsonpath={.metadata.annotations.mkube\.io/pod-network-peer}`)
		if !strings.HasPrefix(peer, "127.0.0.1:") {
			t.Errorf("%s's pod network peer = %q, want its runtime's loopback address", node, peer)
		}
	}

	// The server sees the client's own pod IP.
	testserver.EventuallyWithin(t, 30*time.Second, "curl from node01 to node02", func() (bool, string) {
		out, errOut, _ := k.kubectl(t, "exec", "client", "--", "curl", "-sS", "--max-time", "5", "http://"+serverIP+":8080/clientip")
		return strings.HasPrefix(out, clientIP+":"), out + errOut
	})
	if out := k.mustKubectl(t, "exec", "server", "--", "wget", "-qO-", "http://"+clientIP+":8080/hostname"); out != "client" {
		t.Errorf("wget from node02 to node01 = %q, want client", out)
	}
	if _, errOut, code := k.kubectl(t, "exec", "server", "--", "nc", "-zv", clientIP, "8080"); code != 0 || !strings.Contains(errOut, clientIP+" ("+clientIP+":8080) open") {
		t.Errorf("nc -zv from node02 to node01: %q exit %d", errOut, code)
	}
	// netexec's /dial, as Kubernetes' networking tests check pods.
	dial := "http://127.0.0.1:8080/dial?request=hostname&protocol=http&host=" + serverIP + "&port=8080&tries=1"
	if out := k.mustKubectl(t, "exec", "client", "--", "curl", "-g", "-q", "-s", dial); out != `{"responses":["server"]}` {
		t.Errorf("/dial from client to server = %s", out)
	}
	if out, errOut, _ := k.kubectl(t, "exec", "client", "--", "curl", "-sS", "http://"+serverIP+":9/"); !strings.Contains(errOut, "curl: (7) Failed to connect to "+serverIP+" port 9") {
		t.Errorf("curl to a closed port on node02: %q %q", out, errOut)
	}
	log, _ := os.ReadFile(c.logs["kubelet-node01"])
	if !strings.Contains(string(log), "pod network: routes to the other nodes' pods") {
		t.Errorf("node01's kubelet did not log its routes:\n%s", log)
	}
}
