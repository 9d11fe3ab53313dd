package e2e

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/internal/testserver"
)

// The issue "Real kubectl and client-go work against mkube, unmodified":
// the installed kubectl (v1.32 behind its version dispatcher) is driven
// against the real binaries, and its output, not only its exit code, is
// checked. One cluster serves all subtests, which run in order and build on
// each other's state (the Deployment "web" applied first is used throughout).

const webDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: REPLICAS
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - containerPort: 80
        resources:
          requests:
            cpu: 100m
            memory: 64Mi
`

const soloReplicaSet = `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: solo
spec:
  replicas: 1
  selector:
    matchLabels:
      app: solo
  template:
    metadata:
      labels:
        app: solo
    spec:
      containers:
      - name: c
        image: nginx:1.25
`

const legacyRC = `apiVersion: v1
kind: ReplicationController
metadata:
  name: legacy
spec:
  replicas: 1
  selector:
    app: legacy
  template:
    metadata:
      labels:
        app: legacy
    spec:
      containers:
      - name: c
        image: nginx:1.25
`

func TestKubectl(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01", "node02", "node03")
	k := newKubectl(t, c)

	testserver.EventuallyWithin(t, 30*time.Second, "kubectl get nodes shows 3 Ready nodes", func() (bool, string) {
		out, errOut, code := k.kubectl(t, "get", "nodes")
		if code != 0 {
			return false, errOut
		}
		tab := parseTable(t, out)
		return len(tab.rows) == 3 && sameStrings(tab.column("STATUS"), []string{"Ready", "Ready", "Ready"}), out
	})

	depFile := k.manifest(t, "web.yaml", strings.Replace(webDeployment, "REPLICAS", "3", 1))

	t.Run("apply", func(t *testing.T) {
		if out := k.mustKubectl(t, "apply", "-f", depFile); out != "deployment.apps/web created\n" {
			t.Fatalf("first apply: %q, want %q", out, "deployment.apps/web created\n")
		}
		if out := k.mustKubectl(t, "apply", "-f", depFile); out != "deployment.apps/web unchanged\n" {
			t.Fatalf("apply of the same file: %q, want %q", out, "deployment.apps/web unchanged\n")
		}
		four := k.manifest(t, "web4.yaml", strings.Replace(webDeployment, "REPLICAS", "4", 1))
		if out := k.mustKubectl(t, "apply", "-f", four); out != "deployment.apps/web configured\n" {
			t.Fatalf("apply with replicas 4: %q, want %q", out, "deployment.apps/web configured\n")
		}
		testserver.EventuallyWithin(t, 60*time.Second, "4 web pods are Running", c.nRunning("app%3Dweb", 4))
		if out := k.mustKubectl(t, "get", "deployment", "web", "-o", "jsonpath={.metadata.annotations.kubectl\\.kubernetes\\.io/last-applied-configuration}"); !strings.Contains(out, `"replicas":4`) {
			t.Errorf("last-applied-configuration after the second apply: %q", out)
		}
	})

	// The field selector and drain subtests need a web pod on node01. The
	// requests spread 4 pods over 3 nodes, but scoring is the scheduler's
	// business: if node01 got none, cordon the others and replace a pod.
	t.Run("web-pod-on-node01", func(t *testing.T) {
		onNode01 := func() bool {
			for _, p := range c.pods("app%3Dweb") {
				if p.Spec.NodeName == "node01" {
					return true
				}
			}
			return false
		}
		if onNode01() {
			return
		}
		k.mustKubectl(t, "cordon", "node02", "node03")
		k.mustKubectl(t, "delete", "pod", c.pods("app%3Dweb")[0].Name)
		testserver.EventuallyWithin(t, 60*time.Second, "4 web pods are Running, one on node01", func() (bool, string) {
			pods, ok := c.running("app%3Dweb", 4)
			return ok && onNode01(), podStates(pods)
		})
		k.mustKubectl(t, "uncordon", "node02", "node03")
	})

	t.Run("get", func(t *testing.T) {
		testserver.EventuallyWithin(t, 30*time.Second, "the Deployment reports 4 available", func() (bool, string) {
			out := k.mustKubectl(t, "get", "deployment", "web")
			tab := parseTable(t, out)
			return len(tab.rows) == 1 && tab.rows[0]["READY"] == "4/4" && tab.rows[0]["UP-TO-DATE"] == "4" && tab.rows[0]["AVAILABLE"] == "4", out
		})
		serverPods := c.pods("app%3Dweb")

		// -o wide: all nine pod columns, a row per pod with its IP and node.
		out := k.mustKubectl(t, "get", "pods", "-o", "wide")
		tab := parseTable(t, out)
		wantHeader := []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"}
		if strings.Join(tab.header, "|") != strings.Join(wantHeader, "|") {
			t.Fatalf("get pods -o wide header: %q, want %q\n%s", tab.header, wantHeader, out)
		}
		if len(tab.rows) != len(serverPods) {
			t.Fatalf("get pods -o wide: %d rows, the server has %d pods\n%s", len(tab.rows), len(serverPods), out)
		}
		for _, p := range serverPods {
			r := tab.row(t, "NAME", p.Name)
			if r["READY"] != "1/1" || r["STATUS"] != "Running" || r["RESTARTS"] != "0" || r["IP"] != p.Status.PodIP ||
				r["NODE"] != p.Spec.NodeName || r["NOMINATED NODE"] != "<none>" || r["READINESS GATES"] != "<none>" {
				t.Errorf("row of %s: %v (pod IP %s, node %s)", p.Name, r, p.Status.PodIP, p.Spec.NodeName)
			}
		}
		// Without -o wide the priority-1 columns are hidden.
		if h := parseTable(t, k.mustKubectl(t, "get", "pods")).header; strings.Join(h, "|") != "NAME|READY|STATUS|RESTARTS|AGE" {
			t.Errorf("get pods header: %q", h)
		}

		// Nodes: Ready, no roles, a version.
		nodes := parseTable(t, k.mustKubectl(t, "get", "nodes", "-o", "wide"))
		for _, h := range []string{"NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"} {
			if !contains(nodes.header, h) {
				t.Errorf("get nodes -o wide: no %s column in %q", h, nodes.header)
			}
		}
		for _, r := range nodes.rows {
			if r["STATUS"] != "Ready" || r["ROLES"] != "<none>" || r["VERSION"] == "" || r["INTERNAL-IP"] == "" {
				t.Errorf("node row: %v", r)
			}
		}

		// -o yaml of the Deployment.
		y := k.mustKubectl(t, "get", "deployment", "web", "-o", "yaml")
		for _, want := range []string{"apiVersion: apps/v1\n", "kind: Deployment\n", "  name: web\n", "  replicas: 4\n", "      - image: nginx:1.25\n", "status:\n"} {
			if !strings.Contains(y, want) {
				t.Errorf("get deployment -o yaml lacks %q:\n%s", want, y)
			}
		}
		if out := k.mustKubectl(t, "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"); out != "4" {
			t.Errorf("jsonpath={.spec.replicas}: %q, want %q", out, "4")
		}

		// -o go-template over the list: one line per pod with its node.
		gt := k.mustKubectl(t, "get", "pods", "-l", "app=web", "-o", `go-template={{range .items}}{{.metadata.name}} {{.spec.nodeName}}{{"\n"}}{{end}}`)
		var want []string
		for _, p := range serverPods {
			want = append(want, p.Name+" "+p.Spec.NodeName)
		}
		if got := strings.Split(strings.TrimSpace(gt), "\n"); !sameStrings(got, want) {
			t.Errorf("go-template: %q, want %q", got, want)
		}

		// --show-labels adds LABELS from the row's object metadata.
		sl := parseTable(t, k.mustKubectl(t, "get", "pods", "--show-labels"))
		if sl.header[len(sl.header)-1] != "LABELS" {
			t.Errorf("--show-labels header: %q", sl.header)
		}
		for _, p := range serverPods {
			if l := sl.row(t, "NAME", p.Name)["LABELS"]; l != "app=web,pod-template-hash="+p.Labels["pod-template-hash"] {
				t.Errorf("--show-labels of %s: %q", p.Name, l)
			}
		}

		// -l: matching and not matching.
		if got := parseTable(t, k.mustKubectl(t, "get", "pods", "-l", "app=web")).column("NAME"); !sameStrings(got, names(serverPods)) {
			t.Errorf("-l app=web: %q, want %q", got, names(serverPods))
		}
		out, errOut, code := k.kubectl(t, "get", "pods", "-l", "app=nope")
		if code != 0 || out != "" || strings.TrimSpace(errOut) != "No resources found in default namespace." {
			t.Errorf("-l app=nope: exit %d, stdout %q, stderr %q", code, out, errOut)
		}

		// --field-selector spec.nodeName=node01: exactly the server's pods on node01.
		var onNode01 corev1.PodList
		c.do("GET", "/api/v1/namespaces/default/pods?fieldSelector=spec.nodeName%3Dnode01", "", nil, &onNode01)
		if len(onNode01.Items) == 0 {
			t.Fatalf("no pod on node01 to select (the scheduler should spread 4 pods with requests over 3 nodes)")
		}
		fs := parseTable(t, k.mustKubectl(t, "get", "pods", "--field-selector", "spec.nodeName=node01", "-o", "wide"))
		if !sameStrings(fs.column("NAME"), names(onNode01.Items)) {
			t.Errorf("--field-selector spec.nodeName=node01: %q, want %q", fs.column("NAME"), names(onNode01.Items))
		}
		for _, n := range fs.column("NODE") {
			if n != "node01" {
				t.Errorf("--field-selector spec.nodeName=node01 shows a pod on %q", n)
			}
		}

		// -A: a NAMESPACE column first.
		all := parseTable(t, k.mustKubectl(t, "get", "pods", "-A"))
		if strings.Join(all.header, "|") != "NAMESPACE|NAME|READY|STATUS|RESTARTS|AGE" {
			t.Errorf("get pods -A header: %q", all.header)
		}
		for _, p := range serverPods {
			if ns := all.row(t, "NAME", p.Name)["NAMESPACE"]; ns != "default" {
				t.Errorf("get pods -A: %s in namespace %q", p.Name, ns)
			}
		}
	})

	t.Run("get-watch", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
		defer cancel()
		cmd := k.command(ctx, "get", "pods", "-w")
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cancel(); cmd.Wait() }()
		lines := make(chan string, 100)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		var seen []string
		next := func(what string) string {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("kubectl get pods -w ended before %s; output:\n%s\nstderr:\n%s", what, strings.Join(seen, "\n"), stderr.String())
				}
				seen = append(seen, l)
				return l
			case <-ctx.Done():
				t.Fatalf("no %s from kubectl get pods -w; output:\n%s\nstderr:\n%s", what, strings.Join(seen, "\n"), stderr.String())
			}
			return ""
		}
		if h := next("header"); !strings.HasPrefix(h, "NAME") || !strings.Contains(h, "STATUS") {
			t.Fatalf("first line of get -w: %q", h)
		}
		// The initial list: one line per existing pod.
		for range c.pods("app%3Dweb") {
			next("initial row")
		}
		if out := k.mustKubectl(t, "run", "watched", "--image=nginx:1.25"); out != "pod/watched created\n" {
			t.Fatalf("run watched: %q", out)
		}
		// The new pod shows up, and its later states too (Running once the
		// kubelet started it).
		for {
			f := strings.Fields(next("a line showing the new pod watched Running"))
			if len(f) >= 3 && f[0] == "watched" && f[2] == "Running" {
				break
			}
		}
		k.mustKubectl(t, "delete", "pod", "watched", "--wait=false")
	})

	t.Run("describe", func(t *testing.T) {
		pod := c.pods("app%3Dweb")[0]
		// Events are posted asynchronously by the scheduler and kubelet.
		var out string
		// A pod whose node already has the image gets Pulled ("already
		// present on machine") instead of Pulling, as with a real kubelet.
		testserver.EventuallyWithin(t, 20*time.Second, "describe pod shows Scheduled, Pulling or Pulled, and Started events", func() (bool, string) {
			out = k.mustKubectl(t, "describe", "pod", pod.Name)
			reasons := eventReasons(out)
			return reasons["Scheduled"] && (reasons["Pulling"] || reasons["Pulled"]) && reasons["Started"], out
		})
		for _, want := range []string{
			"Name:             " + pod.Name + "\n",
			"Namespace:        default\n",
			"Node:             " + pod.Spec.NodeName + "/",
			"Status:           Running\n",
			"IP:               " + pod.Status.PodIP + "\n",
			"Controlled By:  ReplicaSet/",
			"    Image:          nginx:1.25\n",
			"Successfully assigned default/" + pod.Name + " to " + pod.Spec.NodeName,
			"Started container nginx",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("describe pod lacks %q:\n%s", want, out)
			}
		}
		if !strings.Contains(out, `Pulling image "nginx:1.25"`) && !strings.Contains(out, `Container image "nginx:1.25" already present on machine`) {
			t.Errorf("describe pod shows neither the pull nor the image already present:\n%s", out)
		}
		evHeader := section(out, "Events:")
		if len(evHeader) < 2 || strings.Join(strings.Fields(evHeader[0]), " ") != "Type Reason Age From Message" {
			t.Errorf("describe pod Events header: %q", evHeader)
		}

		node := k.mustKubectl(t, "describe", "node", "node01")
		for _, want := range []string{"Name:               node01\n", "Taints:             <none>\n", "Unschedulable:      false\n",
			"Conditions:\n", "  Ready            True ", "Capacity:\n", "  cpu:                4\n", "Non-terminated Pods:", "Allocated resources:", "Events:"} {
			if !strings.Contains(node, want) {
				t.Errorf("describe node node01 lacks %q:\n%s", want, node)
			}
		}
		var onNode01 corev1.PodList
		c.do("GET", "/api/v1/namespaces/default/pods?fieldSelector=spec.nodeName%3Dnode01", "", nil, &onNode01)
		for _, p := range onNode01.Items {
			if !strings.Contains(node, p.Name) {
				t.Errorf("describe node node01 does not list its pod %s:\n%s", p.Name, node)
			}
		}

		dep := k.mustKubectl(t, "describe", "deployment", "web")
		for _, want := range []string{"Name:                   web\n", "Selector:               app=web\n",
			"Replicas:               4 desired | 4 updated | 4 total | 4 available | 0 unavailable\n",
			"StrategyType:           RollingUpdate\n", "NewReplicaSet:   web-", "(4/4 replicas created)", "ScalingReplicaSet", "Scaled up replica set web-"} {
			if !strings.Contains(dep, want) {
				t.Errorf("describe deployment web lacks %q:\n%s", want, dep)
			}
		}
	})

	nodeLabel := func(t *testing.T) string {
		return k.mustKubectl(t, "get", "node", "node01", "-o", "jsonpath={.metadata.labels.myname}")
	}

	t.Run("label", func(t *testing.T) {
		if out := k.mustKubectl(t, "label", "node", "node01", "myname=scj"); out != "node/node01 labeled\n" {
			t.Errorf("label: %q", out)
		}
		if l := nodeLabel(t); l != "scj" {
			t.Errorf("label myname after labeling: %q", l)
		}
		if got := parseTable(t, k.mustKubectl(t, "get", "nodes", "-l", "myname=scj")).column("NAME"); strings.Join(got, ",") != "node01" {
			t.Errorf("get nodes -l myname=scj: %q", got)
		}
		errOut := k.mustFail(t, "label", "node", "node01", "myname=other")
		if !strings.Contains(errOut, "'myname' already has a value (scj), and --overwrite is false") {
			t.Errorf("label without --overwrite: %q", errOut)
		}
		if out := k.mustKubectl(t, "label", "--overwrite", "node", "node01", "myname=other"); out != "node/node01 labeled\n" {
			t.Errorf("label --overwrite: %q", out)
		}
		if l := nodeLabel(t); l != "other" {
			t.Errorf("label myname after --overwrite: %q", l)
		}
		if out := k.mustKubectl(t, "label", "node", "node01", "myname-"); out != "node/node01 unlabeled\n" {
			t.Errorf("label myname-: %q", out)
		}
		if out := k.mustKubectl(t, "get", "node", "node01", "--show-labels"); strings.Contains(out, "myname") || !strings.Contains(out, "kubernetes.io/hostname=node01") {
			t.Errorf("labels after removal:\n%s", out)
		}
	})

	t.Run("taint", func(t *testing.T) {
		if out := k.mustKubectl(t, "taint", "node", "node02", "key1=value1:NoSchedule"); out != "node/node02 tainted\n" {
			t.Errorf("taint: %q", out)
		}
		if out := k.mustKubectl(t, "describe", "node", "node02"); !strings.Contains(out, "Taints:             key1=value1:NoSchedule\n") {
			t.Errorf("describe node node02 after taint:\n%s", out)
		}
		if out := k.mustKubectl(t, "get", "node", "node02", "-o", `jsonpath={range .spec.taints[*]}{.key}={.value}:{.effect}{"\n"}{end}`); out != "key1=value1:NoSchedule\n" {
			t.Errorf("taints by jsonpath: %q", out)
		}
		if out := k.mustKubectl(t, "taint", "node", "node02", "key1:NoSchedule-"); out != "node/node02 untainted\n" {
			t.Errorf("untaint: %q", out)
		}
		if out := k.mustKubectl(t, "get", "node", "node02", "-o", "jsonpath={.spec.taints}"); out != "" {
			t.Errorf("taints after removal: %q", out)
		}
		if out := k.mustKubectl(t, "describe", "node", "node02"); !strings.Contains(out, "Taints:             <none>\n") {
			t.Errorf("describe node node02 after untaint:\n%s", out)
		}
	})

	t.Run("cordon", func(t *testing.T) {
		if out := k.mustKubectl(t, "cordon", "node03"); out != "node/node03 cordoned\n" {
			t.Errorf("cordon: %q", out)
		}
		if r := parseTable(t, k.mustKubectl(t, "get", "nodes")).row(t, "NAME", "node03"); r["STATUS"] != "Ready,SchedulingDisabled" {
			t.Errorf("cordoned node03 STATUS: %q", r["STATUS"])
		}
		if out := k.mustKubectl(t, "uncordon", "node03"); out != "node/node03 uncordoned\n" {
			t.Errorf("uncordon: %q", out)
		}
		if r := parseTable(t, k.mustKubectl(t, "get", "nodes")).row(t, "NAME", "node03"); r["STATUS"] != "Ready" {
			t.Errorf("uncordoned node03 STATUS: %q", r["STATUS"])
		}
		if out := k.mustKubectl(t, "get", "node", "node03", "-o", "jsonpath={.spec.unschedulable}"); out != "" && out != "false" {
			t.Errorf("spec.unschedulable after uncordon: %q", out)
		}
	})

	t.Run("drain", func(t *testing.T) {
		var before corev1.PodList
		c.do("GET", "/api/v1/namespaces/default/pods?fieldSelector=spec.nodeName%3Dnode01", "", nil, &before)
		var victims []string
		for _, p := range before.Items {
			if p.Labels["app"] == "web" {
				victims = append(victims, p.Name)
			}
		}
		if len(victims) == 0 {
			t.Fatalf("no web pod on node01 to drain: %v", names(before.Items))
		}
		out, errOut, code := k.kubectl(t, "drain", "node01", "--ignore-daemonsets", "--delete-emptydir-data", "--force", "--timeout=60s")
		if code != 0 {
			t.Fatalf("drain: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
		for _, want := range []string{"node/node01 cordoned\n", "node/node01 drained\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("drain output lacks %q:\n%s\nstderr:\n%s", want, out, errOut)
			}
		}
		for _, v := range victims {
			if !strings.Contains(out, "pod/"+v+" evicted\n") {
				t.Errorf("drain output lacks %q:\n%s\nstderr:\n%s", "pod/"+v+" evicted", out, errOut)
			}
		}
		if r := parseTable(t, k.mustKubectl(t, "get", "nodes")).row(t, "NAME", "node01"); r["STATUS"] != "Ready,SchedulingDisabled" {
			t.Errorf("drained node01 STATUS: %q", r["STATUS"])
		}
		testserver.EventuallyWithin(t, 60*time.Second, "4 web pods are Running again, none on node01", func() (bool, string) {
			pods, ok := c.running("app%3Dweb", 4)
			for _, p := range pods {
				ok = ok && p.Spec.NodeName != "node01" && !contains(victims, p.Name)
			}
			return ok, podStates(pods)
		})
		out, errOut, code = k.kubectl(t, "get", "pods", "-A", "--field-selector", "spec.nodeName=node01,status.phase!=Succeeded,status.phase!=Failed")
		if code != 0 || out != "" || strings.TrimSpace(errOut) != "No resources found" {
			t.Errorf("get pods on node01 after drain: exit %d, stdout %q, stderr %q", code, out, errOut)
		}
		var after corev1.PodList
		c.do("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode01", "", nil, &after)
		if len(after.Items) != 0 {
			t.Errorf("pods left on node01 after drain: %v", names(after.Items))
		}
		if out := k.mustKubectl(t, "uncordon", "node01"); out != "node/node01 uncordoned\n" {
			t.Errorf("uncordon node01: %q", out)
		}
	})

	t.Run("scale", func(t *testing.T) {
		if out := k.mustKubectl(t, "scale", "deployment", "web", "--replicas=2"); out != "deployment.apps/web scaled\n" {
			t.Errorf("scale deployment: %q", out)
		}
		testserver.EventuallyWithin(t, 60*time.Second, "2 web pods are Running", c.nRunning("app%3Dweb", 2))
		if out := k.mustKubectl(t, "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"); out != "2" {
			t.Errorf("deployment replicas after scale: %q", out)
		}

		rsFile := k.manifest(t, "solo.yaml", soloReplicaSet)
		if out := k.mustKubectl(t, "apply", "-f", rsFile); out != "replicaset.apps/solo created\n" {
			t.Errorf("apply rs: %q", out)
		}
		if out := k.mustKubectl(t, "scale", "rs", "solo", "--replicas=3"); out != "replicaset.apps/solo scaled\n" {
			t.Errorf("scale rs: %q", out)
		}
		testserver.EventuallyWithin(t, 60*time.Second, "3 solo pods are Running", c.nRunning("app%3Dsolo", 3))
		testserver.EventuallyWithin(t, 30*time.Second, "get rs solo shows 3 desired, current and ready", func() (bool, string) {
			r := parseTable(t, k.mustKubectl(t, "get", "rs", "solo")).rows[0]
			return r["DESIRED"] == "3" && r["CURRENT"] == "3" && r["READY"] == "3", fmt.Sprint(r)
		})

		rcFile := k.manifest(t, "legacy.yaml", legacyRC)
		if out := k.mustKubectl(t, "apply", "-f", rcFile); out != "replicationcontroller/legacy created\n" {
			t.Errorf("apply rc: %q", out)
		}
		if out := k.mustKubectl(t, "scale", "rc", "legacy", "--replicas=2"); out != "replicationcontroller/legacy scaled\n" {
			t.Errorf("scale rc: %q", out)
		}
		if r := parseTable(t, k.mustKubectl(t, "get", "rc", "legacy")).rows[0]; r["DESIRED"] != "2" {
			t.Errorf("get rc legacy after scale: %v", r)
		}
		testserver.EventuallyWithin(t, 60*time.Second, "2 legacy pods are Running", c.nRunning("app%3Dlegacy", 2))
		testserver.EventuallyWithin(t, 30*time.Second, "get rc legacy shows 2 current and ready", func() (bool, string) {
			r := parseTable(t, k.mustKubectl(t, "get", "rc", "legacy")).rows[0]
			return r["DESIRED"] == "2" && r["CURRENT"] == "2" && r["READY"] == "2", fmt.Sprint(r)
		})
	})

	t.Run("create-configmap-secret", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "greeting")
		if err := os.WriteFile(file, []byte("hello from a file\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if out := k.mustKubectl(t, "create", "configmap", "c", "--from-literal=a=1", "--from-file="+file); out != "configmap/c created\n" {
			t.Errorf("create configmap: %q", out)
		}
		if out := k.mustKubectl(t, "get", "configmap", "c", "-o", "jsonpath={.data.a}|{.data.greeting}"); out != "1|hello from a file\n" {
			t.Errorf("configmap data: %q", out)
		}
		if r := parseTable(t, k.mustKubectl(t, "get", "cm", "c")).rows[0]; r["NAME"] != "c" || r["DATA"] != "2" {
			t.Errorf("get cm c: %v", r)
		}
		if out := k.mustKubectl(t, "create", "secret", "generic", "s", "--from-literal=x=s3cr3t", "--from-literal=y=2"); out != "secret/s created\n" {
			t.Errorf("create secret: %q", out)
		}
		if out := k.mustKubectl(t, "get", "secret", "s", "-o", "jsonpath={.data.x}"); out != base64.StdEncoding.EncodeToString([]byte("s3cr3t")) {
			t.Errorf("secret data x: %q, want base64 of s3cr3t", out)
		}
		if r := parseTable(t, k.mustKubectl(t, "get", "secret", "s")).rows[0]; r["TYPE"] != "Opaque" || r["DATA"] != "2" {
			t.Errorf("get secret s: %v", r)
		}
	})

	t.Run("run", func(t *testing.T) {
		if out := k.mustKubectl(t, "run", "nginx", "--image=nginx:1.25"); out != "pod/nginx created\n" {
			t.Fatalf("run: %q", out)
		}
		testserver.EventuallyWithin(t, 30*time.Second, "pod nginx is Running", func() (bool, string) {
			phase := k.mustKubectl(t, "get", "pod", "nginx", "-o", "jsonpath={.status.phase}")
			return phase == "Running", "phase " + phase
		})
		if out := k.mustKubectl(t, "get", "pod", "nginx", "-o", "jsonpath={.metadata.labels.run} {.spec.containers[0].image}"); out != "nginx nginx:1.25" {
			t.Errorf("pod made by run: %q", out)
		}
	})

	t.Run("patch", func(t *testing.T) {
		// Strategic merge (the default): containers merge by name, so the
		// image survives; a plain JSON merge would replace the list.
		if out := k.mustKubectl(t, "patch", "deployment", "web", "-p", `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","env":[{"name":"A","value":"1"}]}]}}}}`); out != "deployment.apps/web patched\n" {
			t.Errorf("strategic patch: %q", out)
		}
		if out := k.mustKubectl(t, "get", "deployment", "web", "-o", `jsonpath={.spec.template.spec.containers[0].name} {.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].env[0].name}={.spec.template.spec.containers[0].env[0].value}`); out != "nginx nginx:1.25 A=1" {
			t.Errorf("container after strategic patch: %q", out)
		}
		if out := k.mustKubectl(t, "patch", "deployment", "web", "--type", "merge", "-p", `{"metadata":{"labels":{"tier":"frontend"}}}`); out != "deployment.apps/web patched\n" {
			t.Errorf("merge patch: %q", out)
		}
		if out := k.mustKubectl(t, "get", "deployment", "web", "-o", "jsonpath={.metadata.labels.tier}"); out != "frontend" {
			t.Errorf("label after merge patch: %q", out)
		}
		if out := k.mustKubectl(t, "patch", "deployment", "web", "--type", "json", "-p", `[{"op":"replace","path":"/spec/replicas","value":3}]`); out != "deployment.apps/web patched\n" {
			t.Errorf("json patch: %q", out)
		}
		if out := k.mustKubectl(t, "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"); out != "3" {
			t.Errorf("replicas after json patch: %q", out)
		}
		// A patch that changes nothing writes nothing: same resourceVersion,
		// and kubectl (which compares the object before and after) says so.
		// The ConfigMap is used because nothing else writes to it.
		rv := k.mustKubectl(t, "get", "configmap", "c", "-o", "jsonpath={.metadata.resourceVersion}")
		if out := k.mustKubectl(t, "patch", "configmap", "c", "--type", "merge", "-p", `{"data":{"a":"1"}}`); out != "configmap/c patched (no change)\n" {
			t.Errorf("no-op merge patch: %q, want %q", out, "configmap/c patched (no change)\n")
		}
		if after := k.mustKubectl(t, "get", "configmap", "c", "-o", "jsonpath={.metadata.resourceVersion}"); after != rv {
			t.Errorf("a no-op patch changed the resourceVersion from %s to %s", rv, after)
		}
	})

	t.Run("rollout", func(t *testing.T) {
		rolloutStatus := func(t *testing.T) {
			t.Helper()
			out := k.mustKubectl(t, "rollout", "status", "deployment/web", "--timeout=90s")
			if !strings.HasSuffix(out, "deployment \"web\" successfully rolled out\n") {
				t.Fatalf("rollout status: %q", out)
			}
			// Once rolled out, the Deployment's status says so, right away.
			if st := k.mustKubectl(t, "get", "deployment", "web", "-o", "jsonpath={.spec.replicas} {.status.updatedReplicas} {.status.availableReplicas} {.status.replicas} {.status.observedGeneration} {.metadata.generation}"); !rolledOut(st) {
				t.Errorf("deployment status after rollout status: %q (replicas updated available total observedGeneration generation)", st)
			}
		}
		webPodsAre := func(t *testing.T, image string) {
			t.Helper()
			testserver.EventuallyWithin(t, 60*time.Second, "3 web pods with image "+image+" and env A=1 are Running", func() (bool, string) {
				pods, ok := c.running("app%3Dweb", 3)
				var ctrs []string
				for _, p := range pods {
					ctr := p.Spec.Containers[0]
					ok = ok && ctr.Image == image && len(ctr.Env) == 1 && ctr.Env[0].Value == "1"
					ctrs = append(ctrs, fmt.Sprintf("%s %s env %v", p.Name, ctr.Image, ctr.Env))
				}
				return ok, podStates(pods) + "\ncontainers: " + strings.Join(ctrs, "; ")
			})
		}
		revisions := func(t *testing.T) []string {
			t.Helper()
			out := k.mustKubectl(t, "rollout", "history", "deployment/web")
			var revs []string
			header := false
			for _, l := range strings.Split(out, "\n") {
				f := strings.Fields(l)
				switch {
				case len(f) == 0:
				case f[0] == "REVISION":
					header = true
				case header:
					revs = append(revs, f[0])
				}
			}
			if !header {
				t.Fatalf("rollout history:\n%s", out)
			}
			return revs
		}

		// The strategic patch above changed the template: revision 2.
		rolloutStatus(t)
		webPodsAre(t, "nginx:1.25")
		if out := k.mustKubectl(t, "set", "image", "deployment/web", "nginx=nginx:1.26"); out != "deployment.apps/web image updated\n" {
			t.Errorf("set image: %q", out)
		}
		rolloutStatus(t)
		webPodsAre(t, "nginx:1.26")
		if revs := revisions(t); strings.Join(revs, " ") != "1 2 3" {
			t.Errorf("rollout history revisions: %q, want 1 2 3", revs)
		}
		if out := k.mustKubectl(t, "rollout", "undo", "deployment/web"); out != "deployment.apps/web rolled back\n" {
			t.Errorf("rollout undo: %q", out)
		}
		rolloutStatus(t)
		webPodsAre(t, "nginx:1.25")
		if revs := revisions(t); strings.Join(revs, " ") != "1 3 4" {
			t.Errorf("rollout history revisions after undo: %q, want 1 3 4", revs)
		}
	})

	t.Run("delete-f", func(t *testing.T) {
		if out := k.mustKubectl(t, "delete", "-f", filepath.Join(k.dir, "legacy.yaml")); out != "replicationcontroller \"legacy\" deleted\n" {
			t.Errorf("delete -f legacy.yaml: %q", out)
		}
		if errOut := k.mustFail(t, "get", "rc", "legacy"); strings.TrimSpace(errOut) != `Error from server (NotFound): replicationcontrollers "legacy" not found` {
			t.Errorf("get rc legacy after delete: %q", errOut)
		}
		if out := k.mustKubectl(t, "delete", "-f", filepath.Join(k.dir, "solo.yaml")); out != "replicaset.apps \"solo\" deleted\n" {
			t.Errorf("delete -f solo.yaml: %q", out)
		}
		testserver.EventuallyWithin(t, 60*time.Second, "the solo pods are garbage collected", func() (bool, string) {
			pods := c.pods("app%3Dsolo")
			return len(pods) == 0, podStates(pods)
		})
	})

	t.Run("auth-can-i", func(t *testing.T) {
		if out := k.mustKubectl(t, "auth", "can-i", "create", "pods"); out != "yes\n" {
			t.Errorf("auth can-i create pods: %q", out)
		}
	})

	t.Run("api-resources", func(t *testing.T) {
		out := k.mustKubectl(t, "api-resources")
		tab := parseTable(t, out)
		if strings.Join(tab.header, "|") != "NAME|SHORTNAMES|APIVERSION|NAMESPACED|KIND" {
			t.Fatalf("api-resources header: %q", tab.header)
		}
		for _, want := range [][5]string{
			{"pods", "po", "v1", "true", "Pod"},
			{"nodes", "no", "v1", "false", "Node"},
			{"configmaps", "cm", "v1", "true", "ConfigMap"},
			{"secrets", "", "v1", "true", "Secret"},
			{"events", "ev", "v1", "true", "Event"},
			{"namespaces", "ns", "v1", "false", "Namespace"},
			{"replicationcontrollers", "rc", "v1", "true", "ReplicationController"},
			{"deployments", "deploy", "apps/v1", "true", "Deployment"},
			{"replicasets", "rs", "apps/v1", "true", "ReplicaSet"},
		} {
			r := tab.row(t, "NAME", want[0])
			got := [5]string{r["NAME"], r["SHORTNAMES"], r["APIVERSION"], r["NAMESPACED"], r["KIND"]}
			if got != want {
				t.Errorf("api-resources row %v, want %v", got, want)
			}
		}
	})

	t.Run("logs", func(t *testing.T) {
		// The container's process (nginx, from mkube's image catalog)
		// prints into its CRI log file; the kubelet reads it back.
		var out string
		testserver.EventuallyWithin(t, 30*time.Second, "kubectl logs nginx shows nginx's startup", func() (bool, string) {
			out, _, _ = k.kubectl(t, "logs", "nginx")
			return strings.Contains(out, "[notice] 1#1: start worker processes\n"), out
		})
		if !strings.HasPrefix(out, "/docker-entrypoint.sh: ") || !strings.Contains(out, "[notice] 1#1: nginx/") {
			t.Errorf("kubectl logs nginx: want the image's entrypoint, then nginx:\n%s", out)
		}
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		if tail := k.mustKubectl(t, "logs", "nginx", "--tail=1"); tail != lines[len(lines)-1]+"\n" {
			t.Errorf("kubectl logs --tail=1: %q, want the last line %q", tail, lines[len(lines)-1])
		}
		out, errOut, code := k.kubectl(t, "logs", "deployment/web")
		if code != 0 || !strings.Contains(out, "[notice] 1#1: start worker processes") {
			t.Errorf("kubectl logs deployment/web: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
		if errOut := k.mustFail(t, "logs", "nope"); !strings.Contains(errOut, `pods "nope" not found`) {
			t.Errorf("kubectl logs nope: %q", errOut)
		}
	})

	t.Run("explain", func(t *testing.T) {
		// The schemas come from the Go types and their SwaggerDoc.
		out := k.mustKubectl(t, "explain", "pods")
		for _, want := range []string{"KIND:       Pod", "VERSION:    v1", "Pod is a collection of containers", "spec\t<PodSpec>"} {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl explain pods: no %q in\n%s", want, out)
			}
		}
		out = k.mustKubectl(t, "explain", "pod.spec.containers.resources")
		for _, want := range []string{"FIELD: resources <ResourceRequirements>", "limits\t<map[string]Quantity>", "Compute Resources required by this container"} {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl explain pod.spec.containers.resources: no %q in\n%s", want, out)
			}
		}
		out = k.mustKubectl(t, "explain", "deployments.spec.strategy", "--recursive")
		for _, want := range []string{"GROUP:      apps", "maxSurge\t<IntOrString>", "type\t<string>"} {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl explain deployments.spec.strategy --recursive: no %q in\n%s", want, out)
			}
		}
		if out := k.mustKubectl(t, "explain", "pod.spec"); !strings.Contains(out, "containers\t<[]Container> -required-") {
			t.Errorf("kubectl explain pod.spec: containers not required:\n%s", out)
		}
		if errOut := k.mustFail(t, "explain", "pod.spec.nope"); !strings.Contains(errOut, `field "nope" does not exist`) {
			t.Errorf("kubectl explain pod.spec.nope: %q", errOut)
		}
	})

	t.Run("errors", func(t *testing.T) {
		bad := k.manifest(t, "badfield.yaml", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: badfield
spec:
  replica: 2
  selector:
    matchLabels:
      app: badfield
  template:
    metadata:
      labels:
        app: badfield
    spec:
      containers:
      - name: c
        image: nginx
`)
		if errOut := k.mustFail(t, "apply", "--validate=strict", "-f", bad); !strings.Contains(errOut, `unknown field "spec.replica"`) {
			t.Errorf("apply with an unknown field: %q", errOut)
		}
		if code := c.do("GET", "/apis/apps/v1/namespaces/default/deployments/badfield", "", nil, nil); code != 404 {
			t.Errorf("the rejected Deployment was written: GET %d", code)
		}

		badName := k.manifest(t, "badname.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\ndata:\n  a: b\n")
		errOut := k.mustFail(t, "create", "-f", badName)
		if !strings.Contains(errOut, `The ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"`) {
			t.Errorf("create with an invalid name: %q", errOut)
		}

		errOut = k.mustFail(t, "create", "-f", depFile)
		if want := fmt.Sprintf(`Error from server (AlreadyExists): error when creating %q: deployments.apps "web" already exists`, depFile); strings.TrimSpace(errOut) != want {
			t.Errorf("duplicate create: %q, want %q", errOut, want)
		}

		stale := k.manifest(t, "stale-cm.yaml", k.mustKubectl(t, "get", "configmap", "c", "-o", "yaml"))
		k.mustKubectl(t, "label", "configmap", "c", "changed=yes")
		errOut = k.mustFail(t, "replace", "-f", stale)
		if want := fmt.Sprintf(`Error from server (Conflict): error when replacing %q: Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again`, stale); strings.TrimSpace(errOut) != want {
			t.Errorf("stale replace: %q, want %q", errOut, want)
		}
		if out := k.mustKubectl(t, "get", "configmap", "c", "-o", "jsonpath={.metadata.labels.changed}"); out != "yes" {
			t.Errorf("the stale replace overwrote the newer label: %q", out)
		}

		errOut = k.mustFail(t, "get", "pod", "nope")
		if strings.TrimSpace(errOut) != `Error from server (NotFound): pods "nope" not found` {
			t.Errorf("get pod nope: %q", errOut)
		}
		errOut = k.mustFail(t, "get", "deployment", "nope")
		if strings.TrimSpace(errOut) != `Error from server (NotFound): deployments.apps "nope" not found` {
			t.Errorf("get deployment nope: %q", errOut)
		}
	})
	// Last, because a server that ignores dryRun=All changes what the
	// subtests above rely on.
	t.Run("dry-run", func(t *testing.T) {
		if out := k.mustKubectl(t, "create", "configmap", "dry", "--from-literal=a=1", "--dry-run=server"); out != "configmap/dry created (server dry run)\n" {
			t.Errorf("create --dry-run=server: %q", out)
		}
		if out, errOut, _ := k.kubectl(t, "get", "configmap", "dry"); strings.TrimSpace(errOut) != `Error from server (NotFound): configmaps "dry" not found` {
			t.Errorf("a server dry-run create wrote the ConfigMap: get configmap dry:\n%s%s", out, errOut)
		}

		// kubectl diff: a server-side dry-run patch, compared with the live object.
		before := k.mustKubectl(t, "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}")
		five := k.manifest(t, "web5.yaml", strings.Replace(webDeployment, "REPLICAS", "5", 1))
		out, errOut, code := k.kubectl(t, "diff", "-f", five)
		if code != 1 || !strings.Contains(out, "-  replicas: "+before+"\n") || !strings.Contains(out, "+  replicas: 5\n") {
			t.Errorf("kubectl diff (exit 1 and a replicas change expected): exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
		if after := k.mustKubectl(t, "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"); after != before {
			t.Errorf("kubectl diff changed the live Deployment: replicas %s -> %s", before, after)
		}

		if out := k.mustKubectl(t, "delete", "configmap", "c", "--dry-run=server"); out != "configmap \"c\" deleted (server dry run)\n" {
			t.Errorf("delete --dry-run=server: %q", out)
		}
		if _, errOut, code := k.kubectl(t, "get", "configmap", "c"); code != 0 {
			t.Errorf("a server dry-run delete deleted the ConfigMap: %s", errOut)
		}
	})
}

// rolledOut checks "replicas updated available total observedGeneration generation".
func rolledOut(s string) bool {
	f := strings.Fields(s)
	return len(f) == 6 && f[0] == f[1] && f[1] == f[2] && f[2] == f[3] && f[4] == f[5]
}

func names(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
