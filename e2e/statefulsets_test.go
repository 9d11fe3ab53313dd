package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/internal/podcondition"
	"github.com/mkube/mkube/internal/testserver"
)

// A StatefulSet with its headless Service and a claim per pod, driven
// with the real kubectl against the real binaries: ordered creation (each
// pod's claim, provisioned by the default StorageClass, before the pod;
// each pod after its predecessor is Ready), scaling down from the highest
// ordinal and back up onto the same claims, a canary and then a full
// rolling update with a partition, `kubectl rollout undo`, and deletion.

const statefulSetManifest = `apiVersion: v1
kind: Service
metadata:
  name: nginx
spec:
  clusterIP: None
  selector:
    app: nginx
  ports:
  - port: 80
    name: web
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: nginx
  replicas: 3
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - containerPort: 80
          name: web
        volumeMounts:
        - name: www
          mountPath: /usr/share/nginx/html
  volumeClaimTemplates:
  - metadata:
      name: www
    spec:
      accessModes: ["ReadWriteOnce"]
      resources:
        requests:
          storage: 1Gi
`

// stsStatusLine is every line `kubectl rollout status` prints for a
// StatefulSet with a rollingUpdate block (kubectl's
// StatefulSetStatusViewer; the API server defaults partition 0, so it
// speaks of partitions).
var stsStatusLine = regexp.MustCompile(`^(Waiting for statefulset spec update to be observed\.\.\.` +
	`|Waiting for \d+ pods to be ready\.\.\.` +
	`|Waiting for partitioned roll out to finish: \d+ out of \d+ new pods have been updated\.\.\.` +
	`|partitioned roll out complete: \d+ new pods have been updated\.\.\.)$`)

// podHistory records, from a watch of the namespace's pods, the order in
// which pods were added ("pod web-0"), became Ready ("ready web-0") and
// went ("gone web-2").
type podHistory struct {
	mu    sync.Mutex
	log   []string
	ready map[string]bool
}

func watchPodHistory(t *testing.T, c *cluster) *podHistory {
	h := &podHistory{ready: map[string]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", c.URL+"/api/v1/namespaces/default/pods?watch=true", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	go func() { // ends when the test's cleanup cancels the watch
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			var ev struct {
				Type   string
				Object corev1.Pod
			}
			if json.Unmarshal(sc.Bytes(), &ev) != nil {
				continue
			}
			h.note(ev.Type, &ev.Object)
		}
	}()
	return h
}

func (h *podHistory) note(typ string, pod *corev1.Pod) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch typ {
	case "ADDED":
		h.log = append(h.log, "pod "+pod.Name)
		h.ready[pod.Name] = false
	case "DELETED":
		h.log = append(h.log, "gone "+pod.Name)
		delete(h.ready, pod.Name)
	}
	if typ != "DELETED" && podcondition.IsReady(pod) && !h.ready[pod.Name] {
		h.log = append(h.log, "ready "+pod.Name)
		h.ready[pod.Name] = true
	}
}

// before checks that a happened, and (the last time) before b did.
func (h *podHistory) before(t *testing.T, a, b string) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	last := func(s string) int {
		for i, v := range slices.Backward(h.log) {
			if v == s {
				return i
			}
		}
		return -1
	}
	if i, j := last(a), last(b); i < 0 || j < 0 || i > j {
		t.Errorf("want %q before %q; the pods' history: %s", a, b, strings.Join(h.log, ", "))
	}
}

// historyRevisions is the REVISION column of `kubectl rollout history
// sts/web`, which prints the set's name above its table.
func historyRevisions(t *testing.T, k *kubectlRunner) string {
	t.Helper()
	out := k.mustKubectl(t, "rollout", "history", "sts/web")
	var revs []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] != "REVISION" && f[0] != "statefulset.apps/web" {
			revs = append(revs, f[0])
		}
	}
	return strings.Join(revs, " ")
}

func TestStatefulSets(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01", "node02")
	k := newKubectl(t, c)
	testserver.EventuallyWithin(t, 30*time.Second, "two Ready nodes", func() (bool, string) {
		out, errOut, code := k.kubectl(t, "get", "nodes")
		return code == 0 && sameStrings(parseTable(t, out).column("STATUS"), []string{"Ready", "Ready"}), out + errOut
	})
	hist := watchPodHistory(t, c)

	rolloutStatus := func(t *testing.T, wantLast string) {
		t.Helper()
		out := k.mustKubectl(t, "rollout", "status", "statefulset/web", "--timeout=90s")
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		for _, l := range lines {
			if !stsStatusLine.MatchString(l) {
				t.Errorf("rollout status printed %q, not one of kubectl's StatefulSet lines", l)
			}
		}
		if last := lines[len(lines)-1]; last != wantLast {
			t.Fatalf("rollout status ended with %q, want %q\n%s", last, wantLast, out)
		}
	}
	// images is each pod's image, by name.
	images := func(t *testing.T) map[string]string {
		t.Helper()
		out := k.mustKubectl(t, "get", "pods", "-l", "app=nginx", "-o",
			`jsonpath={range .items[*]}{.metadata.name}={.spec.containers[0].image}{"\n"}{end}`)
		m := map[string]string{}
		for _, l := range strings.Fields(out) {
			name, image, _ := strings.Cut(l, "=")
			m[name] = image
		}
		return m
	}
	waitImages := func(t *testing.T, want map[string]string) {
		t.Helper()
		testserver.EventuallyWithin(t, 60*time.Second, fmt.Sprintf("pods %v", want), func() (bool, string) {
			got := images(t)
			return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprint(got)
		})
	}

	t.Run("ordered creation, each pod with its claim", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "web.yaml", statefulSetManifest))
		rolloutStatus(t, "partitioned roll out complete: 3 new pods have been updated...")
		hist.before(t, "ready web-0", "pod web-1")
		hist.before(t, "ready web-1", "pod web-2")

		sts := parseTable(t, k.mustKubectl(t, "get", "sts", "-o", "wide"))
		if want := []string{"NAME", "READY", "AGE", "CONTAINERS", "IMAGES"}; !slices.Equal(sts.header, want) {
			t.Errorf("kubectl get sts -o wide header %v, want %v", sts.header, want)
		}
		if row := sts.row(t, "NAME", "web"); row["READY"] != "3/3" || row["CONTAINERS"] != "nginx" || row["IMAGES"] != "nginx:1.25" {
			t.Errorf("kubectl get sts: %v", row)
		}
		pods := parseTable(t, k.mustKubectl(t, "get", "pods", "-l", "app=nginx"))
		if !sameStrings(pods.column("NAME"), []string{"web-0", "web-1", "web-2"}) || !sameStrings(pods.column("STATUS"), []string{"Running", "Running", "Running"}) {
			t.Errorf("pods %v %v, want web-0..2 Running", pods.column("NAME"), pods.column("STATUS"))
		}
		pvcs := parseTable(t, k.mustKubectl(t, "get", "pvc"))
		for _, name := range []string{"www-web-0", "www-web-1", "www-web-2"} {
			if row := pvcs.row(t, "NAME", name); row["STATUS"] != "Bound" || row["STORAGECLASS"] != "standard" {
				t.Errorf("claim %s: %v, want Bound by the default class", name, row)
			}
		}
		// The identity the kubelet gives the container.
		if got := strings.TrimSpace(k.mustKubectl(t, "exec", "web-1", "--", "hostname")); got != "web-1" {
			t.Errorf("hostname in web-1 = %q", got)
		}
		labels := k.mustKubectl(t, "get", "pod", "web-1", "-o", `jsonpath={.metadata.labels.statefulset\.kubernetes\.io/pod-name} {.metadata.labels.apps\.kubernetes\.io/pod-index} {.spec.subdomain}`)
		if labels != "web-1 1 nginx" {
			t.Errorf("web-1's pod-name, pod-index and subdomain: %q", labels)
		}
		events := k.mustKubectl(t, "describe", "sts", "web")
		for _, want := range []string{"SuccessfulCreate", "create Claim www-web-0 Pod web-0 in StatefulSet web success",
			"create Pod web-2 in StatefulSet web successful"} {
			if !strings.Contains(strings.ToLower(events), strings.ToLower(want)) {
				t.Errorf("kubectl describe sts web lacks %q:\n%s", want, events)
			}
		}
	})

	t.Run("scale down from the highest ordinal, back up onto the same claims", func(t *testing.T) {
		if out := k.mustKubectl(t, "scale", "sts", "web", "--replicas=1"); out != "statefulset.apps/web scaled\n" {
			t.Errorf("kubectl scale printed %q", out)
		}
		waitImages(t, map[string]string{"web-0": "nginx:1.25"})
		hist.before(t, "gone web-2", "gone web-1")
		if n := len(parseTable(t, k.mustKubectl(t, "get", "pvc")).rows); n != 3 {
			t.Errorf("%d claims after scaling down, want the 3 retained", n)
		}
		k.mustKubectl(t, "scale", "sts", "web", "--replicas=3")
		rolloutStatus(t, "partitioned roll out complete: 3 new pods have been updated...")
		if got := k.mustKubectl(t, "get", "pod", "web-2", "-o", "jsonpath={.spec.volumes[0].persistentVolumeClaim.claimName}"); got != "www-web-2" {
			t.Errorf("the new web-2 mounts %q, want its old claim www-web-2", got)
		}
	})

	t.Run("a canary with a partition, then the rest of the rollout", func(t *testing.T) {
		k.mustKubectl(t, "patch", "sts", "web", "-p", `{"spec":{"updateStrategy":{"rollingUpdate":{"partition":2}}}}`)
		k.mustKubectl(t, "set", "image", "sts/web", "nginx=nginx:1.26")
		rolloutStatus(t, "partitioned roll out complete: 1 new pods have been updated...")
		waitImages(t, map[string]string{"web-0": "nginx:1.25", "web-1": "nginx:1.25", "web-2": "nginx:1.26"})

		k.mustKubectl(t, "patch", "sts", "web", "-p", `{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}`)
		rolloutStatus(t, "partitioned roll out complete: 3 new pods have been updated...")
		waitImages(t, map[string]string{"web-0": "nginx:1.26", "web-1": "nginx:1.26", "web-2": "nginx:1.26"})
		hist.before(t, "gone web-1", "gone web-0")
		if got := historyRevisions(t, k); got != "1 2" {
			t.Errorf("rollout history revisions %q, want 1 2", got)
		}
	})

	t.Run("rollout undo brings the first template back", func(t *testing.T) {
		if out := k.mustKubectl(t, "rollout", "undo", "sts/web"); out != "statefulset.apps/web rolled back\n" {
			t.Errorf("kubectl rollout undo printed %q", out)
		}
		rolloutStatus(t, "partitioned roll out complete: 3 new pods have been updated...")
		waitImages(t, map[string]string{"web-0": "nginx:1.25", "web-1": "nginx:1.25", "web-2": "nginx:1.25"})
		// The first template is renumbered newest: 2 and 3, not 1, 2, 3.
		if got := historyRevisions(t, k); got != "2 3" {
			t.Errorf("rollout history revisions after undo %q, want 2 3", got)
		}
		status := k.mustKubectl(t, "get", "sts", "web", "-o", "jsonpath={.status.currentRevision} {.status.updateRevision} {.status.updatedReplicas}")
		if f := strings.Fields(status); len(f) != 3 || f[0] != f[1] || f[2] != "3" {
			t.Errorf("status current/update revision and updated replicas: %q", status)
		}
	})

	// The conformance spec "should recreate evicted statefulset": a pod
	// pinned to node01 asks for a host port another pod holds there; the
	// kubelet rejects it, the controller replaces it, again and again,
	// until the holder goes.
	t.Run("a pod the kubelet rejects is replaced until it fits", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "holder.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: holder
spec:
  nodeName: node01
  containers:
  - name: nginx
    image: nginx:1.25
    ports:
    - {containerPort: 21017, hostPort: 21017}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: pinned
spec:
  serviceName: nginx
  replicas: 1
  selector:
    matchLabels: {app: pinned}
  template:
    metadata:
      labels: {app: pinned}
    spec:
      nodeName: node01
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - {containerPort: 21017, hostPort: 21017}
`))
		testserver.EventuallyWithin(t, 60*time.Second, "pinned-0 rejected and recreated", func() (bool, string) {
			hist.mu.Lock()
			defer hist.mu.Unlock()
			return slices.Contains(hist.log, "gone pinned-0") && hist.log[len(hist.log)-1] != "gone pinned-0", strings.Join(hist.log, ", ")
		})
		events := k.mustKubectl(t, "get", "events", "--field-selector", "involvedObject.name=pinned-0,reason=NodePorts", "-o", "jsonpath={.items[0].message}")
		if events != "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports" {
			t.Errorf("pinned-0's NodePorts event: %q", events)
		}
		k.mustKubectl(t, "delete", "pod", "holder")
		testserver.EventuallyWithin(t, 60*time.Second, "pinned-0 runs once the port is free", func() (bool, string) {
			out, _, _ := k.kubectl(t, "get", "pod", "pinned-0", "-o", "jsonpath={.status.phase}")
			return out == "Running", out
		})
		k.mustKubectl(t, "delete", "sts", "pinned")
	})

	t.Run("deleting the set deletes its pods and keeps the claims", func(t *testing.T) {
		k.mustKubectl(t, "delete", "sts", "web")
		testserver.EventuallyWithin(t, 60*time.Second, "the set's pods gone", func() (bool, string) {
			out := k.mustKubectl(t, "get", "pods", "-l", "app=nginx", "-o", "name")
			return out == "", out
		})
		if n := len(parseTable(t, k.mustKubectl(t, "get", "pvc")).rows); n != 3 {
			t.Errorf("%d claims after deleting the set, want the 3 retained (whenDeleted: Retain)", n)
		}
		if revs := k.mustKubectl(t, "get", "controllerrevisions", "-o", "name"); revs != "" {
			testserver.EventuallyWithin(t, 30*time.Second, "the set's revisions gone", func() (bool, string) {
				out := k.mustKubectl(t, "get", "controllerrevisions", "-o", "name")
				return out == "", out
			})
		}
	})
}
