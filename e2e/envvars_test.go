package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// Seed 003's Secret (§六.4.1, its base64 data as written there) and
// ConfigMap (§七.2.3, as `kubectl create configmap --from-literal`).
const seedSecret = `apiVersion: v1
kind: Secret
metadata:
  name: my-secret
type: Opaque
data:
  username: YWRtaW4=
  password: YWRtaW4xMjM0NTY=
`

// The seed's §七.3.1 pod, as the Kubernetes docs write it out: two keys
// of special-config as SPECIAL_LEVEL_KEY and SPECIAL_TYPE_KEY, printed by
// `env` in the seed's my-app:0.0.1 with its /bin/bash.
const specialPod = `apiVersion: v1
kind: Pod
metadata:
  name: special-pod
spec:
  restartPolicy: Never
  containers:
    - name: special-container
      image: my-app:0.0.1
      command: ['/bin/bash', '-c', 'env']
      env:
        - name: SPECIAL_LEVEL_KEY
          valueFrom:
            configMapKeyRef:
              name: special-config
              key: special.how
        - name: SPECIAL_TYPE_KEY
          valueFrom:
            configMapKeyRef:
              name: special-config
              key: special.type
        - name: USERNAME
          valueFrom:
            secretKeyRef:
              name: my-secret
              key: username
        - name: LEVEL_AND_TYPE
          value: '$(SPECIAL_LEVEL_KEY)-$(SPECIAL_TYPE_KEY), not $$(SPECIAL_LEVEL_KEY) nor $(UNDEFINED)'
        - name: MY_POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        - name: MY_NODE_NAME
          valueFrom:
            fieldRef:
              fieldPath: spec.nodeName
        - name: MY_MEM_LIMIT
          valueFrom:
            resourceFieldRef:
              resource: limits.memory
              divisor: 1Mi
`

// The docs' "use ConfigMap-defined environment variables in Pod
// commands": $(VAR) in command and args is the kubelet's, not a shell's.
const echoPod = `apiVersion: v1
kind: Pod
metadata:
  name: echo-pod
spec:
  restartPolicy: Never
  containers:
    - name: test-container
      image: busybox:1.36
      command: ['/bin/echo', '$(SPECIAL_LEVEL_KEY) $(SPECIAL_TYPE_KEY)']
      env:
        - name: SPECIAL_LEVEL_KEY
          valueFrom:
            configMapKeyRef:
              name: special-config
              key: special.how
        - name: SPECIAL_TYPE_KEY
          valueFrom:
            configMapKeyRef:
              name: special-config
              key: special.type
`

// envFrom: all of special-config, and my-secret's keys behind a prefix;
// env wins over envFrom for special.how.
const envFromPod = `apiVersion: v1
kind: Pod
metadata:
  name: envfrom-pod
spec:
  restartPolicy: Never
  containers:
    - name: app
      image: busybox:1.36
      command: ['sh', '-c', 'env']
      envFrom:
        - configMapRef:
            name: special-config
        - prefix: SECRET_
          secretRef:
            name: my-secret
      env:
        - name: special.how
          value: overridden
`

// Optional references to what does not exist: the container starts, and
// the variables are absent.
const optionalPod = `apiVersion: v1
kind: Pod
metadata:
  name: optional-pod
spec:
  restartPolicy: Never
  containers:
    - name: app
      image: busybox:1.36
      command: ['sh', '-c', 'env']
      envFrom:
        - configMapRef:
            name: no-such-config
            optional: true
      env:
        - name: FROM_MISSING_CONFIGMAP
          valueFrom:
            configMapKeyRef:
              name: no-such-config
              key: k
              optional: true
        - name: FROM_MISSING_KEY
          valueFrom:
            secretKeyRef:
              name: my-secret
              key: no-such-key
              optional: true
        - name: PRESENT
          value: "yes"
`

// Seed 003 §九.2's Service for an external database, and a pod after it
// with its service links turned off.
const myService = `apiVersion: v1
kind: Service
metadata:
  name: my-service
spec:
  ports:
    - port: 3306
      protocol: TCP
      targetPort: 3306
`

const servicePods = `apiVersion: v1
kind: Pod
metadata:
  name: links-pod
spec:
  restartPolicy: Never
  containers:
    - name: app
      image: busybox:1.36
      command: ['sh', '-c', 'env']
---
apiVersion: v1
kind: Pod
metadata:
  name: nolinks-pod
spec:
  restartPolicy: Never
  enableServiceLinks: false
  containers:
    - name: app
      image: busybox:1.36
      command: ['sh', '-c', 'env']
`

// A ConfigMap that comes after its pod, and a Secret that never comes.
const latePods = `apiVersion: v1
kind: Pod
metadata:
  name: late-config-pod
spec:
  containers:
    - name: app
      image: busybox:1.36
      command: ['sh', '-c', 'echo level=$LEVEL; sleep 3600']
      env:
        - name: LEVEL
          valueFrom:
            configMapKeyRef:
              name: late-config
              key: level
---
apiVersion: v1
kind: Pod
metadata:
  name: missing-secret-pod
spec:
  containers:
    - name: app
      image: busybox:1.36
      command: ['sleep', '3600']
      env:
        - name: PASSWORD
          valueFrom:
            secretKeyRef:
              name: db-secret
              key: password
`

// TestContainerEnv: the kubelet builds a container's environment as
// Kubernetes' does, from ConfigMaps, Secrets, the downward API and the
// Services, expands $(VAR), and holds a container whose ConfigMap or
// Secret is missing in CreateContainerConfigError until it exists.
func TestContainerEnv(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01")
	k := newKubectl(t, c)
	k.mustKubectl(t, "create", "configmap", "special-config", "--from-literal=special.how=very", "--from-literal=special.type=charm")
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "secret.yaml", seedSecret))

	// logsOf waits until pod ran to completion and returns its log.
	logsOf := func(t *testing.T, pod string) string {
		t.Helper()
		testserver.EventuallyWithin(t, 30*time.Second, pod+" is Completed", func() (bool, string) {
			out, _, _ := k.kubectl(t, "get", "pod", pod, "--no-headers")
			return strings.Contains(out, " Completed "), out
		})
		return k.mustKubectl(t, "logs", pod)
	}
	wantLines := func(t *testing.T, what, out string, want []string, absent ...string) {
		t.Helper()
		lines := map[string]bool{}
		for _, l := range strings.Split(out, "\n") {
			lines[l] = true
		}
		for _, w := range want {
			if !lines[w] {
				t.Errorf("%s lacks the line %q:\n%s", what, w, out)
			}
		}
		for _, a := range absent {
			if strings.Contains(out, a) {
				t.Errorf("%s has %q, which it should not:\n%s", what, a, out)
			}
		}
	}

	t.Run("seed 003's ConfigMap and Secret keys as env, with $(VAR), the downward API and the API server's service", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "special-pod.yaml", specialPod))
		logs := logsOf(t, "special-pod")
		t.Logf("kubectl logs special-pod:\n%s", logs)
		wantLines(t, "kubectl logs special-pod", logs, []string{
			"SPECIAL_LEVEL_KEY=very",
			"SPECIAL_TYPE_KEY=charm",
			"USERNAME=admin",
			"LEVEL_AND_TYPE=very-charm, not $(SPECIAL_LEVEL_KEY) nor $(UNDEFINED)",
			"MY_POD_NAME=special-pod",
			"MY_NODE_NAME=node01",
			"MY_MEM_LIMIT=8192", // no limit: the node's 8Gi allocatable
			"KUBERNETES_SERVICE_HOST=10.96.0.1",
			"KUBERNETES_SERVICE_PORT=443",
			"KUBERNETES_SERVICE_PORT_HTTPS=443",
			"KUBERNETES_PORT=tcp://10.96.0.1:443",
			"KUBERNETES_PORT_443_TCP=tcp://10.96.0.1:443",
			"KUBERNETES_PORT_443_TCP_PROTO=tcp",
			"KUBERNETES_PORT_443_TCP_PORT=443",
			"KUBERNETES_PORT_443_TCP_ADDR=10.96.0.1",
		})
	})

	t.Run("$(VAR) in command is expanded by the kubelet", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "echo-pod.yaml", echoPod))
		if logs := logsOf(t, "echo-pod"); logs != "very charm\n" {
			t.Errorf("kubectl logs echo-pod = %q, want %q", logs, "very charm\n")
		}
	})

	t.Run("envFrom gives every key, a Secret's decoded, behind its prefix; env wins", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "envfrom-pod.yaml", envFromPod))
		logs := logsOf(t, "envfrom-pod")
		t.Logf("kubectl logs envfrom-pod:\n%s", logs)
		wantLines(t, "kubectl logs envfrom-pod", logs,
			[]string{"special.how=overridden", "special.type=charm", "SECRET_username=admin", "SECRET_password=admin123456"},
			"special.how=very", "YWRtaW4")
	})

	t.Run("optional references to what is missing are left out", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "optional-pod.yaml", optionalPod))
		wantLines(t, "kubectl logs optional-pod", logsOf(t, "optional-pod"), []string{"PRESENT=yes"},
			"FROM_MISSING_CONFIGMAP", "FROM_MISSING_KEY")
	})

	t.Run("a Service's variables reach the pods created after it, unless service links are off", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "my-service.yaml", myService))
		ip := k.mustKubectl(t, "get", "service", "my-service", "-o", "jsonpath={.spec.clusterIP}")
		if ip == "" {
			t.Fatal("my-service has no cluster IP")
		}
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "service-pods.yaml", servicePods))
		logs := logsOf(t, "links-pod")
		wantLines(t, "kubectl logs links-pod", logs, []string{
			"MY_SERVICE_SERVICE_HOST=" + ip,
			"MY_SERVICE_SERVICE_PORT=3306",
			"MY_SERVICE_PORT=tcp://" + ip + ":3306",
			"MY_SERVICE_PORT_3306_TCP=tcp://" + ip + ":3306",
			"MY_SERVICE_PORT_3306_TCP_PROTO=tcp",
			"MY_SERVICE_PORT_3306_TCP_PORT=3306",
			"MY_SERVICE_PORT_3306_TCP_ADDR=" + ip,
			"KUBERNETES_SERVICE_HOST=10.96.0.1",
		})
		wantLines(t, "kubectl logs nolinks-pod", logsOf(t, "nolinks-pod"), []string{"KUBERNETES_SERVICE_HOST=10.96.0.1"}, "MY_SERVICE_")
	})

	t.Run("a missing ConfigMap or Secret is CreateContainerConfigError until it exists", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "late-pods.yaml", latePods))
		for pod, msg := range map[string]string{
			"late-config-pod":    `configmap "late-config" not found`,
			"missing-secret-pod": `secret "db-secret" not found`,
		} {
			testserver.EventuallyWithin(t, 30*time.Second, pod+" is CreateContainerConfigError", func() (bool, string) {
				out, _, _ := k.kubectl(t, "get", "pod", pod)
				tab := parseTable(t, out)
				return len(tab.rows) == 1 && tab.rows[0]["STATUS"] == "CreateContainerConfigError", out
			})
			t.Logf("kubectl get pod %s:\n%s", pod, k.mustKubectl(t, "get", "pod", pod))
			if got := k.mustKubectl(t, "get", "pod", pod, "-o", "jsonpath={.status.phase} {.status.containerStatuses[0].state.waiting.message}"); got != "Pending "+msg {
				t.Errorf("%s: phase and waiting message %q, want %q", pod, got, "Pending "+msg)
			}
			describe := k.mustKubectl(t, "describe", "pod", pod)
			t.Logf("kubectl describe pod %s (events):\n%s", pod, strings.Join(section(describe, "Events:"), "\n"))
			for _, want := range []string{"Reason:       CreateContainerConfigError", "Error: " + msg} {
				if !strings.Contains(describe, want) {
					t.Errorf("kubectl describe pod %s lacks %q:\n%s", pod, want, describe)
				}
			}
		}

		// The ConfigMap comes, without the key first: the next retry says so.
		k.mustKubectl(t, "create", "configmap", "late-config", "--from-literal=other=x")
		want := "couldn't find key level in ConfigMap default/late-config"
		testserver.EventuallyWithin(t, 30*time.Second, "late-config-pod waits for the key", func() (bool, string) {
			out := k.mustKubectl(t, "get", "pod", "late-config-pod", "-o", "jsonpath={.status.containerStatuses[0].state.waiting.message}")
			return out == want, out
		})
		// Then the key: the kubelet's retry starts the container, nobody
		// touching the pod.
		k.mustKubectl(t, "patch", "configmap", "late-config", "-p", `{"data":{"level":"high"}}`)
		testserver.EventuallyWithin(t, 30*time.Second, "late-config-pod runs once its ConfigMap has the key", func() (bool, string) {
			out, _, _ := k.kubectl(t, "get", "pod", "late-config-pod")
			tab := parseTable(t, out)
			return len(tab.rows) == 1 && tab.rows[0]["STATUS"] == "Running" && tab.rows[0]["READY"] == "1/1", out
		})
		t.Logf("kubectl get pod late-config-pod:\n%s", k.mustKubectl(t, "get", "pod", "late-config-pod"))
		testserver.EventuallyWithin(t, 10*time.Second, "late-config-pod logs its level", func() (bool, string) {
			logs, _, _ := k.kubectl(t, "logs", "late-config-pod")
			return logs == "level=high\n", logs
		})
		if out := k.mustKubectl(t, "get", "pod", "missing-secret-pod", "--no-headers"); !strings.Contains(out, "CreateContainerConfigError") {
			t.Errorf("missing-secret-pod left CreateContainerConfigError with no Secret: %s", out)
		}
	})
}
