package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/internal/testserver"
)

// grpcProbePods: the Kubernetes docs' gRPC liveness example as written,
// and agnhost's grpc-health-checking, whose answer the test changes,
// behind a gRPC readiness probe.
const grpcProbePods = `# kubernetes.io/docs/tasks/configure-pod-container/configure-liveness-readiness-startup-probes/#define-a-grpc-liveness-probe
apiVersion: v1
kind: Pod
metadata:
  name: etcd-with-grpc
spec:
  containers:
  - name: etcd
    image: registry.k8s.io/etcd:3.5.1-0
    command: [ "/usr/local/bin/etcd", "--data-dir",  "/var/lib/etcd", "--listen-client-urls", "http://0.0.0.0:2379", "--advertise-client-urls", "http://127.0.0.1:2379", "--log-level", "debug"]
    ports:
    - containerPort: 2379
    livenessProbe:
      grpc:
        port: 2379
      initialDelaySeconds: 10
---
apiVersion: v1
kind: Pod
metadata:
  name: grpc-health
spec:
  containers:
  - name: agnhost
    image: registry.k8s.io/e2e-test-images/agnhost:2.40
    args: [grpc-health-checking]
    ports:
    - containerPort: 5000
    - containerPort: 8080
    readinessProbe:
      grpc:
        port: 5000
      periodSeconds: 1
      failureThreshold: 1
`

// TestGRPCProbes: the kubelet's grpc probes call the gRPC Health service
// of what the images serve on the pod network. The docs' etcd stays
// Running with its liveness probe passing; agnhost's readiness follows
// its /make-not-serving and /make-serving, reached through kubectl
// port-forward, as are etcd's gRPC and HTTP on one port.
func TestGRPCProbes(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01")
	k := newKubectl(t, c)
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "grpc.yaml", grpcProbePods))
	pod := func(name string) corev1.Pod {
		var p corev1.Pod
		if err := json.Unmarshal([]byte(k.mustKubectl(t, "get", "pod", name, "-o", "json")), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	readyIs := func(name string, want corev1.ConditionStatus) func() (bool, string) {
		return func() (bool, string) {
			for _, cond := range pod(name).Status.Conditions {
				if cond.Type == corev1.PodReady {
					return cond.Status == want, string(cond.Status)
				}
			}
			return false, "no Ready condition"
		}
	}

	// agnhost: Ready once its first Check answers SERVING.
	testserver.EventuallyWithin(t, 30*time.Second, "grpc-health Ready", readyIs("grpc-health", corev1.ConditionTrue))
	agnhost := portForward(t, k, "pod/grpc-health", "8080")
	get := func(path string) {
		resp, err := http.Get("http://127.0.0.1:" + agnhost["8080"] + path)
		if err != nil {
			t.Fatalf("GET %s through port-forward: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %s %s", path, resp.Status, body)
		}
	}
	get("/make-not-serving")
	testserver.EventuallyWithin(t, 20*time.Second, "grpc-health not Ready after /make-not-serving", readyIs("grpc-health", corev1.ConditionFalse))
	events := k.mustKubectl(t, "get", "events", "--field-selector", "involvedObject.name=grpc-health",
		"-o", "jsonpath={range .items[*]}{.reason}: {.message}{\"\\n\"}{end}")
	if want := `Unhealthy: Readiness probe failed: service unhealthy (responded with "NOT_SERVING")`; !strings.Contains(events, want) {
		t.Errorf("grpc-health's events lack %q:\n%s", want, events)
	}
	get("/make-serving")
	testserver.EventuallyWithin(t, 20*time.Second, "grpc-health Ready again after /make-serving", readyIs("grpc-health", corev1.ConditionTrue))
	logs := k.mustKubectl(t, "logs", "grpc-health")
	for _, want := range []string{"gRPC server starting to listen on :5000", "Serving the Check request for health check, started at ",
		"Mark as unhealthy", "Mark as healthy"} {
		if !strings.Contains(logs, want) {
			t.Errorf("kubectl logs grpc-health lacks %q:\n%s", want, logs)
		}
	}

	// etcd: Running and Ready (it has no readiness probe); its client
	// port answers the Health service, and HTTP/1.1 too.
	testserver.EventuallyWithin(t, 30*time.Second, "etcd-with-grpc Ready", readyIs("etcd-with-grpc", corev1.ConditionTrue))
	etcd := portForward(t, k, "pod/etcd-with-grpc", "2379")["2379"]
	conn, err := grpc.NewClient("127.0.0.1:"+etcd, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("Check of etcd through port-forward: %v, %v; want SERVING", resp.GetStatus(), err)
	}
	if resp, err := http.Get("http://127.0.0.1:" + etcd + "/health"); err != nil {
		t.Errorf("GET /health of etcd: %v", err)
	} else {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != `{"health":"true","reason":""}` {
			t.Errorf("GET /health of etcd: %s %q", resp.Status, body)
		}
	}
	// The liveness probe's first run is 10 s after the start; a failure
	// would be an Unhealthy event then, and the kill three failures on.
	testserver.EventuallyWithin(t, 30*time.Second, "etcd-with-grpc past its liveness probe's first runs", func() (bool, string) {
		p := pod("etcd-with-grpc")
		s := p.Status.ContainerStatuses[0]
		return s.State.Running != nil && time.Since(s.State.Running.StartedAt.Time) > 13*time.Second, string(p.Status.Phase)
	})
	if s := pod("etcd-with-grpc").Status.ContainerStatuses[0]; s.RestartCount != 0 || !s.Ready {
		t.Errorf("etcd-with-grpc: restarts %d, ready %v; want 0 and true", s.RestartCount, s.Ready)
	}
	events = k.mustKubectl(t, "get", "events", "--field-selector", "involvedObject.name=etcd-with-grpc",
		"-o", "jsonpath={range .items[*]}{.reason}: {.message}{\"\\n\"}{end}")
	if strings.Contains(events, "Unhealthy") || !strings.Contains(events, "Started: Started container etcd") {
		t.Errorf("etcd-with-grpc's events:\n%s", events)
	}
	if logs := k.mustKubectl(t, "logs", "etcd-with-grpc"); !strings.Contains(logs, `"msg":"ready to serve client requests"`) {
		t.Errorf("kubectl logs etcd-with-grpc:\n%s", logs)
	}
	if out := k.mustKubectl(t, "describe", "pod", "etcd-with-grpc"); !regexp.MustCompile(`Liveness:\s+grpc <pod>:2379 .*delay=10s timeout=1s period=10s #success=1 #failure=3`).MatchString(out) {
		t.Errorf("kubectl describe pod etcd-with-grpc shows no grpc liveness probe:\n%s", out)
	}
}

// portForward runs `kubectl port-forward target :port...` until the test
// ends and returns the local port of each remote one.
func portForward(t *testing.T, k *kubectlRunner, target string, ports ...string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	args := []string{"port-forward", target}
	for _, p := range ports {
		args = append(args, ":"+p)
	}
	out := startReading(t, k.command(ctx, args...))
	forwarding := regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)`)
	local := map[string]string{}
	testserver.EventuallyWithin(t, 20*time.Second, "kubectl port-forward "+target+" listens", func() (bool, string) {
		for _, m := range forwarding.FindAllStringSubmatch(out.String(), -1) {
			local[m[2]] = m[1]
		}
		return len(local) == len(ports), out.String()
	})
	return local
}
