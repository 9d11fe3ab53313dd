package e2e

import (
	"encoding/base64"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// TestSeedExamples applies every file of examples/ (the YAML of seeds 000
// and 003, one manifest a file) with the real kubectl, as a learner types
// it, and checks the outcome examples/README.md's table states for it:
// the same commands, the same expected output. A subtest per file, named
// after it, so that a failure names the example.
//
// The cluster has the seed's shape (seedNodes: a master tainted
// node-role.kubernetes.io/master:NoSchedule, and node01..node03), and the
// labels and taints are the ones the seeds' kubectl commands set. The
// order keeps the run short (about 45 s on 2 cores) and the examples out
// of each other's way:
//
//  1. seed 000 §三 and seed 003 §十一 (placement), on untainted workers;
//  2. seed 000 §四: every worker tainted; 000-08 then waits out its
//     tolerationSeconds on node02, tainted NoExecute, while
//  3. seed 003 §六–十, §十二 run on node01 and node03;
//  4. 000-08's eviction is checked, node02's taint removed;
//  5. seed 000 §五: a bare pod and a Deployment drained off node02.
//
// Examples sharing a name (000-02/000-03, 000-06/000-08, 000-01/000-10,
// 003-02/003-03, 003-04/003-05, 003-08/003-10, 003-09/003-11) are applied
// one after the other, the first deleted first, as the README says.
func TestSeedExamples(t *testing.T) {
	t.Parallel()
	c := startClusterWithNodes(t, nil, seedNodes...)
	x := &examplesRun{seedRun{c: c, k: newKubectl(t, c)}}
	testserver.EventuallyWithin(t, 30*time.Second, "kubectl get nodes shows the master and three workers Ready", func() (bool, string) {
		out, errOut, code := x.k.kubectl(t, "get", "nodes")
		if code != 0 {
			return false, errOut
		}
		tab := parseTable(t, out)
		return len(tab.rows) == 4 && sameStrings(tab.column("STATUS"), []string{"Ready", "Ready", "Ready", "Ready"}), out
	})
	workers := []string{"node01", "node02", "node03"}

	// 1. Placement. Seed 000 §三.2's labels, and node03 in node02's myname
	// domain ("当一个拓扑域中有多个符合条件时").
	x.k.mustKubectl(t, "label", "nodes", "node01", "myname=scj")
	x.k.mustKubectl(t, "label", "nodes", "node02", "node03", "myname=tan")
	myname := map[string]string{"node01": "scj", "node02": "tan", "node03": "tan"}

	t.Run("000-01-deploy-nodename.yaml", func(t *testing.T) {
		x.apply(t, "000-01-deploy-nodename.yaml", "deployment.apps/deploy-demo1 created")
		for _, r := range x.runningPods(t, "app=deploy-demo", 3) {
			if r["NODE"] != "node01" {
				t.Errorf("000-01-deploy-nodename.yaml: kubectl get pod -o wide: %s on %q, want node01", r["NAME"], r["NODE"])
			}
		}
	})
	t.Run("000-02-node-affinity-required.yaml", func(t *testing.T) {
		x.apply(t, "000-02-node-affinity-required.yaml", "pod/affinity created")
		if node := x.runningOn(t, "affinity"); node != "node02" && node != "node03" {
			t.Errorf("000-02-node-affinity-required.yaml: pod affinity (myname NotIn [liliang scj]) runs on %s, want node02 or node03", node)
		}
		x.remove(t, "000-02-node-affinity-required.yaml", `pod "affinity" deleted`)
	})
	t.Run("000-03-node-affinity-preferred.yaml", func(t *testing.T) {
		x.apply(t, "000-03-node-affinity-preferred.yaml", "pod/affinity created")
		if node := x.runningOn(t, "affinity"); node != "node03" {
			t.Errorf("000-03-node-affinity-preferred.yaml: pod affinity (preferring node03) runs on %s, want node03", node)
		}
	})
	var demoNode string
	t.Run("000-04-pod-myapp-demo.yaml", func(t *testing.T) {
		x.apply(t, "000-04-pod-myapp-demo.yaml", "pod/myapp-demo created")
		if demoNode = x.runningOn(t, "myapp-demo"); !slices.Contains(workers, demoNode) {
			t.Errorf("000-04-pod-myapp-demo.yaml: myapp-demo runs on %s, want a worker", demoNode)
		}
	})
	t.Run("000-05-pod-affinity.yaml", func(t *testing.T) {
		x.apply(t, "000-05-pod-affinity.yaml", "pod/myapp-demo7 created")
		if node := x.runningOn(t, "myapp-demo7"); myname[node] == "" || myname[node] != myname[demoNode] {
			t.Errorf("000-05-pod-affinity.yaml: myapp-demo7 runs on %s (myname=%q), want a node with myname=%q like %s, where myapp-demo runs",
				node, myname[node], myname[demoNode], demoNode)
		}
	})
	t.Run("000-06-pod-anti-affinity.yaml", func(t *testing.T) {
		x.k.mustKubectl(t, "label", "nodes", "--all", "myclass=qq")
		x.apply(t, "000-06-pod-anti-affinity.yaml", "pod/myapp-demo8 created")
		x.pending(t, "myapp-demo8", msgPodAntiAffinity)
		x.remove(t, "000-06-pod-anti-affinity.yaml", `pod "myapp-demo8" deleted`)
	})

	t.Run("003-08-node-affinity-required.yaml", func(t *testing.T) {
		x.apply(t, "003-08-node-affinity-required.yaml", "pod/my-app created")
		x.pending(t, "my-app", msgNoNodeMatchesSelector)
		x.k.mustKubectl(t, "label", "nodes", "node01", "zone=foo")
		if node := x.runningOn(t, "my-app"); node != "node01" {
			t.Errorf("003-08-node-affinity-required.yaml: after kubectl label nodes node01 zone=foo, my-app runs on %s, want node01", node)
		}
		x.k.mustKubectl(t, "delete", "pod", "my-app")
	})
	// Both replicas of 003-09, and all three of 003-11, go to node01, as in
	// Kubernetes: PodTopologySpread's system defaults take from node01 at
	// most 2×60 for spreading, less than the preference's 2×100
	// (NodeAffinity, InterPodAffinity).
	t.Run("003-09-deploy-node-affinity-preferred.yaml", func(t *testing.T) {
		x.apply(t, "003-09-deploy-node-affinity-preferred.yaml", "deployment.apps/my-app created")
		x.onNode01(t, "003-09-deploy-node-affinity-preferred.yaml", x.runningPods(t, "app=my-app", 2))
		x.remove(t, "003-09-deploy-node-affinity-preferred.yaml", `deployment.apps "my-app" deleted`)
	})
	t.Run("003-10-pod-affinity-required.yaml", func(t *testing.T) {
		x.apply(t, "003-10-pod-affinity-required.yaml", "pod/tomcat created", "pod/my-app created")
		tomcat, myApp := x.runningOn(t, "tomcat"), x.runningOn(t, "my-app")
		if myApp != tomcat {
			t.Errorf("003-10-pod-affinity-required.yaml: my-app runs on %s, tomcat on %s: want the same node", myApp, tomcat)
		}
	})
	t.Run("003-11-deploy-pod-affinity-preferred.yaml", func(t *testing.T) {
		x.apply(t, "003-11-deploy-pod-affinity-preferred.yaml", "pod/cache created", "deployment.apps/my-app created")
		if node := x.runningOn(t, "cache"); node != "node01" {
			t.Errorf("003-11-deploy-pod-affinity-preferred.yaml: cache (nodeSelector zone: foo) runs on %s, want node01", node)
		}
		x.onNode01(t, "003-11-deploy-pod-affinity-preferred.yaml", x.runningPods(t, "app=my-app", 3))
	})
	// Out of the way of what follows: nothing of step 1 is left but labels.
	for _, f := range []string{"000-01-deploy-nodename.yaml", "000-03-node-affinity-preferred.yaml", "000-04-pod-myapp-demo.yaml",
		"000-05-pod-affinity.yaml", "003-10-pod-affinity-required.yaml", "003-11-deploy-pod-affinity-preferred.yaml"} {
		x.k.mustKubectl(t, "delete", "-f", exampleFile(f), "--wait=false")
	}

	// 2. Seed 000 §四: "现所有节点都有污点".
	for _, n := range workers {
		x.k.mustKubectl(t, "taint", "node", n, "key1=value1:NoSchedule")
	}
	t.Run("000-07-toleration-master.yaml", func(t *testing.T) {
		x.apply(t, "000-07-toleration-master.yaml", "pod/myapp-demo6 created")
		if node := x.runningOn(t, "myapp-demo6"); node != "master" {
			t.Errorf("000-07-toleration-master.yaml: myapp-demo6 runs on %s, want master", node)
		}
	})
	var tainted time.Time // when node02 was tainted NoExecute, at the latest
	t.Run("000-08-toleration-noexecute.yaml, until it runs on node02", func(t *testing.T) {
		x.apply(t, "000-08-toleration-noexecute.yaml", "pod/myapp-demo8 created")
		x.pending(t, "myapp-demo8", msgAllTainted)
		x.k.mustKubectl(t, "taint", "node", "node02", "key1=value1:NoSchedule-")
		tainted = time.Now()
		x.k.mustKubectl(t, "taint", "node", "node02", "key1=value1:NoExecute")
		if node := x.runningOn(t, "myapp-demo8"); node != "node02" {
			t.Errorf("000-08-toleration-noexecute.yaml: after kubectl taint node node02 key1=value1:NoExecute, myapp-demo8 runs on %s, want node02", node)
		}
	})
	for _, n := range []string{"node01", "node03"} {
		x.k.mustKubectl(t, "taint", "node", n, "key1=value1:NoSchedule-")
	}

	// 3. Seed 003's pods, Secrets, ConfigMaps, Services, probes and RBAC,
	// while myapp-demo8 is tolerated on node02.
	t.Run("003-01-secret.yaml", func(t *testing.T) {
		x.apply(t, "003-01-secret.yaml", "secret/my-secret created")
		r := parseTable(t, x.k.mustKubectl(t, "get", "secret", "my-secret")).row(t, "NAME", "my-secret")
		if r["TYPE"] != "Opaque" || r["DATA"] != "2" {
			t.Errorf("003-01-secret.yaml: kubectl get secret my-secret: %v, want TYPE Opaque, DATA 2", r)
		}
		enc := x.k.mustKubectl(t, "get", "secret", "my-secret", "-o", "jsonpath={.data.password}")
		if dec, err := base64.StdEncoding.DecodeString(enc); err != nil || string(dec) != "admin123456" {
			t.Errorf("003-01-secret.yaml: .data.password %q decodes to %q (%v), want admin123456", enc, dec, err)
		}
	})
	t.Run("003-02-secret-volume.yaml", func(t *testing.T) {
		x.apply(t, "003-02-secret-volume.yaml", "secret/my-secret unchanged", "pod/secret-test created")
		x.runningOn(t, "secret-test")
		x.wantExec(t, "003-02-secret-volume.yaml", "secret-test", "password\nusername\n", "ls", "/my-secret")
		x.wantExec(t, "003-02-secret-volume.yaml", "secret-test", "admin", "cat", "/my-secret/username")
		x.wantExec(t, "003-02-secret-volume.yaml", "secret-test", "admin123456", "cat", "/my-secret/password")
		x.k.mustKubectl(t, "delete", "pod", "secret-test")
	})
	t.Run("003-03-secret-env.yaml", func(t *testing.T) {
		x.apply(t, "003-03-secret-env.yaml", "secret/my-secret unchanged", "pod/secret-test created")
		x.runningOn(t, "secret-test")
		x.wantExec(t, "003-03-secret-env.yaml", "secret-test", "admin\n", "printenv", "USERNAME")
	})
	t.Run("003-04-configmap-env.yaml", func(t *testing.T) {
		x.apply(t, "003-04-configmap-env.yaml", "configmap/special-config created", "pod/special-pod created")
		x.crashLooping(t, "003-04-configmap-env.yaml")
		if out := x.k.mustKubectl(t, "logs", "special-pod"); !slices.Contains(strings.Split(out, "\n"), "SPECIAL_CONFIG_HOW=very") {
			t.Errorf("003-04-configmap-env.yaml: kubectl logs special-pod has no line SPECIAL_CONFIG_HOW=very:\n%s", out)
		}
		x.k.mustKubectl(t, "delete", "pod", "special-pod")
	})
	t.Run("003-05-configmap-volume.yaml", func(t *testing.T) {
		x.apply(t, "003-05-configmap-volume.yaml", "configmap/special-config unchanged", "pod/special-pod created")
		x.crashLooping(t, "003-05-configmap-volume.yaml")
		if out := x.k.mustKubectl(t, "logs", "special-pod"); strings.TrimSuffix(out, "\n") != "very" {
			t.Errorf("003-05-configmap-volume.yaml: kubectl logs special-pod: %q, want very", out)
		}
	})
	t.Run("003-06-service-endpoints.yaml", func(t *testing.T) {
		x.apply(t, "003-06-service-endpoints.yaml", "service/my-service created", "endpoints/my-service created")
		svc := parseTable(t, x.k.mustKubectl(t, "get", "service", "my-service", "-o", "wide")).row(t, "NAME", "my-service")
		if svc["TYPE"] != "ClusterIP" || svc["PORT(S)"] != "3306/TCP" || svc["SELECTOR"] != "<none>" {
			t.Errorf("003-06-service-endpoints.yaml: kubectl get service my-service -o wide: %v, want ClusterIP, 3306/TCP, SELECTOR <none>", svc)
		}
		// No controller touches the Endpoints of a Service without a
		// selector: what was applied stays.
		ep := parseTable(t, x.k.mustKubectl(t, "get", "endpoints", "my-service")).row(t, "NAME", "my-service")
		if ep["ENDPOINTS"] != "192.192.192.6:3306" {
			t.Errorf("003-06-service-endpoints.yaml: kubectl get endpoints my-service: ENDPOINTS %q, want 192.192.192.6:3306", ep["ENDPOINTS"])
		}
		// The mirroring controller copies them into an EndpointSlice,
		// which is what kubectl describe reads.
		testserver.EventuallyWithin(t, 10*time.Second, "003-06-service-endpoints.yaml: describe shows the mirrored endpoints", func() (bool, string) {
			out := x.k.mustKubectl(t, "describe", "service", "my-service")
			return regexp.MustCompile(`(?m)^Endpoints:\s+192\.192\.192\.6:3306$`).MatchString(out), out
		})
	})
	t.Run("003-07-goproxy.yaml", func(t *testing.T) {
		x.apply(t, "003-07-goproxy.yaml", "pod/goproxy created")
		// Running at once, not ready before its first probe (5 s).
		testserver.EventuallyWithin(t, 4*time.Second, "003-07-goproxy.yaml: goproxy is Running, READY 0/1", func() (bool, string) {
			out, errOut, code := x.k.kubectl(t, "get", "pod", "goproxy")
			if code != 0 {
				return false, errOut
			}
			r := parseTable(t, out).rows[0]
			return r["STATUS"] == "Running" && r["READY"] == "0/1", out
		})
		x.runningOn(t, "goproxy") // READY 1/1
		// Ready no sooner than initialDelaySeconds (5) after the start;
		// both times are whole seconds.
		out := x.k.mustKubectl(t, "get", "pod", "goproxy", "-o",
			`jsonpath={.status.containerStatuses[0].state.running.startedAt}|{.status.conditions[?(@.type=="Ready")].lastTransitionTime}|{.status.containerStatuses[0].restartCount}`)
		f := strings.Split(out, "|")
		started, err1 := time.Parse(time.RFC3339, f[0])
		ready, err2 := time.Parse(time.RFC3339, f[1%len(f)])
		if err1 != nil || err2 != nil || ready.Sub(started) < 4*time.Second {
			t.Errorf("003-07-goproxy.yaml: startedAt|Ready since|restarts = %s: want Ready no sooner than 5 s after the start (4 s in whole seconds)", out)
		}
		if f[len(f)-1] != "0" {
			t.Errorf("003-07-goproxy.yaml: restartCount %s, want 0", f[len(f)-1])
		}
		t.Logf("003-07-goproxy.yaml: Ready %s after the container started", ready.Sub(started))
		out = x.k.mustKubectl(t, "describe", "pod", "goproxy")
		for _, want := range []string{
			"    Liveness:       tcp-socket :8080 delay=15s timeout=1s period=20s #success=1 #failure=3\n",
			"    Readiness:      tcp-socket :8080 delay=5s timeout=1s period=10s #success=1 #failure=3\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("003-07-goproxy.yaml: kubectl describe pod goproxy has no line %q:\n%s", strings.TrimSpace(want), out)
			}
		}
	})
	x.rbac(t)

	// 4. 000-08's tolerationSeconds: 30 runs out.
	t.Run("000-08-toleration-noexecute.yaml, evicted 30 s later", func(t *testing.T) {
		x.gone(t, "myapp-demo8", 60*time.Second)
		evicted := x.eventTime(t, "myapp-demo8", "TaintManagerEviction", "Marking for deletion Pod default/myapp-demo8")
		// Event times are whole seconds: one second of slack.
		if after := evicted.Sub(tainted); after < 29*time.Second || after > 45*time.Second {
			t.Errorf("000-08-toleration-noexecute.yaml: TaintManagerEviction %s after kubectl taint node node02 key1=value1:NoExecute, want about 30 s (tolerationSeconds)", after)
		}
	})
	x.k.mustKubectl(t, "taint", "node", "node02", "key1=value1:NoExecute-")

	// 5. Seed 000 §五: only node02 is labelled chen, then drained.
	x.k.mustKubectl(t, "label", "nodes", "node02", "myname=chen", "--overwrite")
	t.Run("000-09-pod-nodename.yaml", func(t *testing.T) {
		x.apply(t, "000-09-pod-nodename.yaml", "pod/myapp-demo3 created")
		if node := x.runningOn(t, "myapp-demo3"); node != "node02" {
			t.Errorf("000-09-pod-nodename.yaml: myapp-demo3 runs on %s, want node02", node)
		}
	})
	t.Run("000-10-deploy-nodeselector.yaml", func(t *testing.T) {
		x.apply(t, "000-10-deploy-nodeselector.yaml", "deployment.apps/deploy-demo1 created")
		before := x.runningPods(t, "app=deploy-demo", 3)
		for _, r := range before {
			if r["NODE"] != "node02" {
				t.Errorf("000-10-deploy-nodeselector.yaml: %s on %s before the drain, want node02 (the only myname=chen)", r["NAME"], r["NODE"])
			}
		}
		out := x.k.mustKubectl(t, "drain", "node02", "--ignore-daemonsets", "--delete-emptydir-data", "--force")
		for _, r := range before {
			if !strings.Contains(out, "pod/"+r["NAME"]+" evicted\n") {
				t.Errorf("000-10-deploy-nodeselector.yaml: kubectl drain node02 does not say pod/%s evicted:\n%s", r["NAME"], out)
			}
		}
		if !strings.Contains(out, "pod/myapp-demo3 evicted\n") || !strings.HasSuffix(out, "node/node02 drained\n") {
			t.Errorf("000-09-pod-nodename.yaml: kubectl drain node02 does not evict myapp-demo3 and end drained:\n%s", out)
		}
		if r := parseTable(t, x.k.mustKubectl(t, "get", "nodes")).row(t, "NAME", "node02"); r["STATUS"] != "Ready,SchedulingDisabled" {
			t.Errorf("000-10-deploy-nodeselector.yaml: kubectl get nodes after the drain: node02 STATUS %q, want Ready,SchedulingDisabled", r["STATUS"])
		}
		x.gone(t, "myapp-demo3", 30*time.Second) // no controller: gone for good
		x.pendingPods(t, "app=deploy-demo", 3, msgCordonedAndSelector)
		x.k.mustKubectl(t, "label", "nodes", "node01", "myname=chen", "--overwrite")
		for _, r := range x.runningPods(t, "app=deploy-demo", 3) {
			if r["NODE"] != "node01" {
				t.Errorf("000-10-deploy-nodeselector.yaml: after kubectl label nodes node01 myname=chen --overwrite, %s on %s, want node01", r["NAME"], r["NODE"])
			}
		}
	})
}

// examplesRun is TestSeedExamples' cluster and kubectl, with seedRun's
// waits (runningOn, pending, gone, ...).
type examplesRun struct{ seedRun }

// exampleFile is the path of an example, read from the repository.
func exampleFile(name string) string { return filepath.Join("..", "examples", name) }

// apply runs kubectl apply -f on the example and checks what kubectl
// says, one line an object.
func (x *examplesRun) apply(t *testing.T, file string, want ...string) {
	t.Helper()
	out := x.k.mustKubectl(t, "apply", "-f", exampleFile(file))
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); !slices.Equal(got, want) {
		t.Fatalf("%s: kubectl apply -f examples/%s printed %q, want %q", file, file, got, want)
	}
}

// remove runs kubectl delete -f on the example, which waits until the
// objects are gone, so that the next example may take their names.
func (x *examplesRun) remove(t *testing.T, file string, want ...string) {
	t.Helper()
	out := x.k.mustKubectl(t, "delete", "-f", exampleFile(file))
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); !slices.Equal(got, want) {
		t.Errorf("%s: kubectl delete -f examples/%s printed %q, want %q", file, file, got, want)
	}
}

// onNode01 checks that every one of the rows is on node01.
func (x *examplesRun) onNode01(t *testing.T, file string, rows []map[string]string) {
	t.Helper()
	var nodes []string
	for _, r := range rows {
		nodes = append(nodes, r["NODE"])
	}
	if slices.ContainsFunc(nodes, func(n string) bool { return n != "node01" }) {
		t.Errorf("%s: replicas on %v, want all on node01 (as in Kubernetes)", file, nodes)
	}
}

// wantExec runs kubectl exec POD -- ARGS and compares its output.
func (x *examplesRun) wantExec(t *testing.T, file, pod, want string, args ...string) {
	t.Helper()
	if out := x.k.mustKubectl(t, append([]string{"exec", pod, "--"}, args...)...); out != want {
		t.Errorf("%s: kubectl exec %s -- %s: %q, want %q", file, pod, strings.Join(args, " "), out, want)
	}
}

// crashLooping waits until special-pod, whose command exits 0 under
// restartPolicy Always, has been restarted: RESTARTS at least 1, STATUS
// CrashLoopBackOff (or Completed, between a run and its back-off).
func (x *examplesRun) crashLooping(t *testing.T, file string) {
	t.Helper()
	testserver.EventuallyWithin(t, 30*time.Second, file+": special-pod is restarted (CrashLoopBackOff)", func() (bool, string) {
		out, errOut, code := x.k.kubectl(t, "get", "pod", "special-pod")
		if code != 0 {
			return false, errOut
		}
		r := parseTable(t, out).rows[0]
		restarts, _ := strconv.Atoi(strings.Fields(r["RESTARTS"] + " 0")[0])
		return restarts >= 1 && r["READY"] == "0/1" && (r["STATUS"] == "CrashLoopBackOff" || r["STATUS"] == "Completed"), out
	})
}

// eventTime is when the event of reason with message about the object
// was first recorded, as kubectl get events has it.
func (x *examplesRun) eventTime(t *testing.T, object, reason, message string) time.Time {
	t.Helper()
	out := x.k.mustKubectl(t, "get", "events", "--field-selector", "involvedObject.name="+object+",reason="+reason,
		"-o", `jsonpath={range .items[*]}{.firstTimestamp}|{.message}{"\n"}{end}`)
	for _, l := range strings.Split(out, "\n") {
		if ts, msg, ok := strings.Cut(l, "|"); ok && msg == message {
			at, err := time.Parse(time.RFC3339, ts)
			if err != nil {
				t.Fatalf("event %s of %s: firstTimestamp %q: %v", reason, object, ts, err)
			}
			return at
		}
	}
	t.Fatalf("kubectl get events: no %s event %q for %s among:\n%s", reason, message, object, out)
	return time.Time{}
}

// rbac applies seed 003 §十二's Roles and bindings and asks kubectl auth
// can-i what they grant. kubectl runs on the plain port, as
// system:unsecured in system:masters, which may impersonate: --as jane
// asks as jane.
func (x *examplesRun) rbac(t *testing.T) {
	canI := func(t *testing.T, file, want string, args ...string) {
		t.Helper()
		out, errOut, _ := x.k.kubectl(t, append([]string{"auth", "can-i"}, args...)...)
		if out != want+"\n" {
			t.Errorf("%s: kubectl auth can-i %s: %q (%s), want %s", file, strings.Join(args, " "), out, errOut, want)
		}
	}
	for _, ex := range []struct {
		file  string
		lines []string
		check func(t *testing.T, file string)
	}{
		{"003-12-role-pod-reader.yaml", []string{"namespace/local created", "role.rbac.authorization.k8s.io/pod-reader created"}, func(t *testing.T, file string) {
			canI(t, file, "no", "list", "pods", "-n", "local", "--as", "jane")
		}},
		{"003-13-clusterrole-secret-reader.yaml", []string{"clusterrole.rbac.authorization.k8s.io/secret-reader created"}, nil},
		{"003-14-rolebinding-read-pods.yaml", []string{"role.rbac.authorization.k8s.io/pod-reader created", "rolebinding.rbac.authorization.k8s.io/read-pods created"}, func(t *testing.T, file string) {
			canI(t, file, "yes", "list", "pods", "--as", "jane")
			canI(t, file, "no", "delete", "pods", "--as", "jane")
			canI(t, file, "no", "list", "pods", "-n", "local", "--as", "jane")
		}},
		{"003-15-rolebinding-clusterrole.yaml", []string{"namespace/development created", "clusterrole.rbac.authorization.k8s.io/secret-reader unchanged", "rolebinding.rbac.authorization.k8s.io/read-pods created"}, func(t *testing.T, file string) {
			canI(t, file, "yes", "get", "secrets", "-n", "development", "--as", "dave")
			canI(t, file, "no", "get", "secrets", "-n", "default", "--as", "dave")
		}},
		{"003-16-clusterrolebinding-secrets.yaml", []string{"clusterrole.rbac.authorization.k8s.io/secret-reader unchanged", "clusterrolebinding.rbac.authorization.k8s.io/read-secrets-global created"}, func(t *testing.T, file string) {
			canI(t, file, "yes", "list", "secrets", "--all-namespaces", "--as", "alice", "--as-group", "manager")
			canI(t, file, "no", "list", "secrets", "--all-namespaces", "--as", "alice")
		}},
		{"003-17-role-pods-and-logs.yaml", []string{"role.rbac.authorization.k8s.io/pod-and-logs-reader created"}, nil},
		{"003-18-role-configmap-updater.yaml", []string{"role.rbac.authorization.k8s.io/configmap-updater created"}, func(t *testing.T, file string) {
			if out := x.k.mustKubectl(t, "get", "role", "configmap-updater", "-o", "jsonpath={.rules[0].resources} {.rules[0].resourceNames} {.rules[0].verbs}"); out != `["configmaps"] ["my-configmap"] ["get","update"]` {
				t.Errorf("%s: the Role's rule: %s", file, out)
			}
		}},
	} {
		t.Run(ex.file, func(t *testing.T) {
			x.apply(t, ex.file, ex.lines...)
			if ex.check != nil {
				ex.check(t, ex.file)
			}
		})
	}
}
