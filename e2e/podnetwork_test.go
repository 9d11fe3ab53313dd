package e2e

import (
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
