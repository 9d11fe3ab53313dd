package e2e

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// phpApache is the HorizontalPodAutoscaler walkthrough's manifest, as
// the Kubernetes docs give it (application/php-apache.yaml): each
// request to hpa-example costs it CPU, capped at its 500m limit.
const phpApache = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: php-apache
spec:
  selector:
    matchLabels:
      run: php-apache
  template:
    metadata:
      labels:
        run: php-apache
    spec:
      containers:
      - name: php-apache
        image: registry.k8s.io/hpa-example
        ports:
        - containerPort: 80
        resources:
          limits:
            cpu: 500m
          requests:
            cpu: 200m
---
apiVersion: v1
kind: Service
metadata:
  name: php-apache
  labels:
    run: php-apache
spec:
  ports:
  - port: 80
  selector:
    run: php-apache
`

// Seed 003 §三.4 as the Kubernetes docs' walkthrough types it: php-apache,
// `kubectl autoscale --cpu-percent=50 --min=1 --max=10`, a busybox load
// generator; the HPA scales the Deployment up on the metrics the
// metrics-server add-on scraped from the kubelets, and back to one pod
// once the load stops and the (shortened) downscale stabilization window
// has passed. Nothing is faked on the way: the runtime accounts the CPU
// each request costs, the kubelets serve it, the metrics server rates it.
func TestHPAWalkthroughScalesPhpApacheUpUnderLoadAndBackDown(t *testing.T) {
	t.Parallel()
	c := startClusterWith(t, clusterFlags{secure: true, apiserver: []string{"--bind-address", "0.0.0.0"},
		controllerManager: []string{"--horizontal-pod-autoscaler-sync-period", "2s", "--horizontal-pod-autoscaler-downscale-stabilization", "20s"}},
		kubeletNode{name: "node01", flags: []string{"--node-ip", "127.0.0.2"}},
		kubeletNode{name: "node02", flags: []string{"--node-ip", "127.0.0.3"}})
	k := newKubectl(t, c)
	t.Cleanup(func() {
		if t.Failed() {
			hpa, _, _ := k.kubectl(t, "describe", "hpa", "php-apache")
			top, _, _ := k.kubectl(t, "top", "pods")
			t.Logf("kubectl describe hpa php-apache:\n%s\nkubectl top pods:\n%s", hpa, top)
		}
	})
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "metrics-server.yaml", fastMetricsServerManifest(t)))
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "php-apache.yaml", phpApache))
	testserver.EventuallyWithin(t, 60*time.Second, "php-apache is available", func() (bool, string) {
		out := k.mustKubectl(t, "get", "deployment", "php-apache", "-o", "jsonpath={.status.availableReplicas}")
		return out == "1", out
	})
	k.mustKubectl(t, "autoscale", "deployment", "php-apache", "--cpu-percent=50", "--min=1", "--max=10")
	k.mustKubectl(t, "run", "load-generator", "--image=busybox:1.28", "--restart=Never", "--",
		"/bin/sh", "-c", "while sleep 0.01; do wget -q -O- http://php-apache; done")

	// kubectl get hpa shows the usage above the target, and the replicas rise.
	usage := regexp.MustCompile(`cpu: (\d+)%/50%`)
	testserver.EventuallyWithin(t, 120*time.Second, "the HPA scales php-apache up", func() (bool, string) {
		out := k.mustKubectl(t, "get", "hpa", "php-apache")
		row := parseTable(t, out).rows[0]
		replicas, _ := strconv.Atoi(row["REPLICAS"])
		m := usage.FindStringSubmatch(row["TARGETS"])
		if m == nil || replicas < 2 {
			return false, out
		}
		n, _ := strconv.Atoi(m[1])
		if n > 50 || replicas >= 3 {
			t.Logf("kubectl get hpa under load:\n%s", out)
			return true, ""
		}
		return false, out
	})
	if out := k.mustKubectl(t, "describe", "hpa", "php-apache"); !regexp.MustCompile(
		`Normal\s+SuccessfulRescale\s+.*horizontal-pod-autoscaler\s+New size: \d+; reason: cpu resource utilization \(percentage of request\) above target`).MatchString(out) {
		t.Errorf("kubectl describe hpa has no SuccessfulRescale above target:\n%s", out)
	}

	// Without load it goes back to one pod, after the window.
	k.mustKubectl(t, "delete", "pod", "load-generator", "--grace-period=0", "--force")
	testserver.EventuallyWithin(t, 150*time.Second, "the HPA scales php-apache back to 1", func() (bool, string) {
		out := k.mustKubectl(t, "get", "deployment", "php-apache", "-o", "jsonpath={.spec.replicas}")
		return out == "1", "spec.replicas " + out
	})
	out := k.mustKubectl(t, "describe", "hpa", "php-apache")
	if !strings.Contains(out, "New size: 1; reason: All metrics below target") {
		t.Errorf("kubectl describe hpa has no rescale to 1 below target:\n%s", out)
	}
	t.Logf("kubectl describe hpa php-apache:\n%s", out)
}
