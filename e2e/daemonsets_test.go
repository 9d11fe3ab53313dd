package e2e

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// DaemonSets driven with the real kubectl against the real binaries on
// three nodes: one pod per node, bound by the scheduler through the node
// affinity the controller gives each pod; node labels moving a pod; an
// image rolling out node by node (`kubectl rollout status`), its history
// and `kubectl rollout undo`; and deletion taking the pods and the
// ControllerRevisions with it.

const agentDaemonSet = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:
      containers:
      - name: agent
        image: nginx:1.25
`

const ssdDaemonSet = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: ssd
spec:
  selector:
    matchLabels:
      app: ssd
  template:
    metadata:
      labels:
        app: ssd
    spec:
      nodeSelector:
        disk: ssd
      containers:
      - name: ssd
        image: nginx:1.25
`

// daemonRolloutLine is every line `kubectl rollout status` prints for a
// DaemonSet named agent (kubectl's DaemonSetStatusViewer).
var daemonRolloutLine = regexp.MustCompile(`^(Waiting for daemon set spec update to be observed\.\.\.` +
	`|Waiting for daemon set "agent" rollout to finish: (\d+ out of \d+ new pods have been updated|\d+ of \d+ updated pods are available)\.\.\.` +
	`|daemon set "agent" successfully rolled out)$`)

func TestDaemonSets(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01", "node02", "node03")
	k := newKubectl(t, c)
	testserver.EventuallyWithin(t, 30*time.Second, "kubectl get nodes shows 3 Ready nodes", func() (bool, string) {
		out, errOut, code := k.kubectl(t, "get", "nodes")
		return code == 0 && sameStrings(parseTable(t, out).column("STATUS"), []string{"Ready", "Ready", "Ready"}), out + errOut
	})

	// podsByNode maps each node to the images of the Running pods of
	// selector there, from `kubectl get pods -o wide`.
	podsByNode := func(t *testing.T, selector string) (map[string][]string, string) {
		t.Helper()
		out := k.mustKubectl(t, "get", "pods", "-l", selector, "-o", "wide")
		byNode := map[string][]string{}
		if strings.HasPrefix(out, "No resources") || strings.TrimSpace(out) == "" {
			return byNode, out
		}
		images := k.mustKubectl(t, "get", "pods", "-l", selector, "-o", `jsonpath={range .items[*]}{.metadata.name}={.spec.containers[0].image}{"\n"}{end}`)
		imageOf := map[string]string{}
		for _, l := range strings.Fields(images) {
			name, image, _ := strings.Cut(l, "=")
			imageOf[name] = image
		}
		for _, r := range parseTable(t, out).rows {
			if r["STATUS"] == "Running" {
				byNode[r["NODE"]] = append(byNode[r["NODE"]], imageOf[r["NAME"]])
			}
		}
		return byNode, out
	}
	// onlyOn waits until selector's Running pods are exactly one per node
	// of nodes, with image, and nothing else.
	onlyOn := func(t *testing.T, selector, image string, nodes ...string) {
		t.Helper()
		testserver.EventuallyWithin(t, 60*time.Second, selector+" runs one "+image+" pod on each of "+strings.Join(nodes, ","), func() (bool, string) {
			byNode, out := podsByNode(t, selector)
			if len(byNode) != len(nodes) {
				return false, out
			}
			for _, n := range nodes {
				if !slices.Equal(byNode[n], []string{image}) {
					return false, out
				}
			}
			return true, out
		})
	}

	k.mustKubectl(t, "apply", "-f", k.manifest(t, "agent.yaml", agentDaemonSet))

	t.Run("one pod on every node, placed by the scheduler", func(t *testing.T) {
		onlyOn(t, "app=agent", "nginx:1.25", "node01", "node02", "node03")
		// The controller pins each pod with node affinity; spec.nodeName is
		// the scheduler's binding.
		out := k.mustKubectl(t, "get", "pods", "-l", "app=agent", "-o",
			`jsonpath={range .items[*]}{.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values[0]}={.spec.nodeName} {end}`)
		for _, pair := range strings.Fields(out) {
			if want, got, _ := strings.Cut(pair, "="); want != got {
				t.Errorf("a pod for %s was bound to %s", want, got)
			}
		}
		events := k.mustKubectl(t, "get", "events", "--field-selector", "involvedObject.kind=DaemonSet,reason=SuccessfulCreate", "-o", "jsonpath={.items[*].source.component}")
		if !strings.Contains(events, "daemonset-controller") {
			t.Errorf("no SuccessfulCreate event from daemonset-controller: %q", events)
		}
	})

	t.Run("kubectl get ds shows the counts", func(t *testing.T) {
		var row map[string]string
		testserver.EventuallyWithin(t, 30*time.Second, "agent 3/3 available", func() (bool, string) {
			out := k.mustKubectl(t, "get", "ds", "agent")
			tab := parseTable(t, out)
			if !slices.Equal(tab.header, []string{"NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE"}) {
				t.Fatalf("columns %v", tab.header)
			}
			row = tab.rows[0]
			return row["AVAILABLE"] == "3", out
		})
		for col, want := range map[string]string{"DESIRED": "3", "CURRENT": "3", "READY": "3", "UP-TO-DATE": "3", "NODE SELECTOR": "<none>"} {
			if row[col] != want {
				t.Errorf("%s = %q, want %q", col, row[col], want)
			}
		}
		wide := parseTable(t, k.mustKubectl(t, "get", "daemonsets", "-o", "wide")).row(t, "NAME", "agent")
		if wide["CONTAINERS"] != "agent" || wide["IMAGES"] != "nginx:1.25" || wide["SELECTOR"] != "app=agent" {
			t.Errorf("wide row %v", wide)
		}
		if out := k.mustKubectl(t, "get", "all"); !strings.Contains(out, "daemonset.apps/agent") {
			t.Errorf("kubectl get all does not list the DaemonSet:\n%s", out)
		}
		describe := k.mustKubectl(t, "describe", "daemonset", "agent")
		for _, want := range []string{"Desired Number of Nodes Scheduled: 3", "Number of Nodes Scheduled with Available Pods: 3",
			"Pods Status:  3 Running / 0 Waiting / 0 Succeeded / 0 Failed", "daemonset-controller  Created pod: agent-"} {
			if !strings.Contains(describe, want) {
				t.Errorf("kubectl describe daemonset lacks %q:\n%s", want, describe)
			}
		}
	})

	t.Run("kubectl drain leaves daemon pods only with --ignore-daemonsets", func(t *testing.T) {
		// Seed 000's `kubectl drain node02 --ignore-daemonsets ...`: a
		// daemon pod would come straight back (it tolerates the cordon),
		// so drain refuses to evict it unless told to ignore it.
		errOut := k.mustFail(t, "drain", "node01", "--timeout=20s")
		if !strings.Contains(errOut, "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)") {
			t.Errorf("drain without --ignore-daemonsets said:\n%s", errOut)
		}
		out, errOut, code := k.kubectl(t, "drain", "node01", "--ignore-daemonsets", "--timeout=20s")
		if code != 0 || !strings.Contains(out+errOut, "ignoring DaemonSet-managed Pods: default/agent-") || !strings.Contains(out, "node/node01 drained") {
			t.Errorf("drain --ignore-daemonsets: exit %d\n%s%s", code, out, errOut)
		}
		onlyOn(t, "app=agent", "nginx:1.25", "node01", "node02", "node03")
		k.mustKubectl(t, "uncordon", "node01")
	})

	t.Run("a node label moves a pod that selects it", func(t *testing.T) {
		k.mustKubectl(t, "apply", "-f", k.manifest(t, "ssd.yaml", ssdDaemonSet))
		k.mustKubectl(t, "label", "node", "node02", "disk=ssd")
		onlyOn(t, "app=ssd", "nginx:1.25", "node02")
		k.mustKubectl(t, "label", "node", "node02", "disk-")
		k.mustKubectl(t, "label", "node", "node03", "disk=ssd")
		onlyOn(t, "app=ssd", "nginx:1.25", "node03")
		row := parseTable(t, k.mustKubectl(t, "get", "ds", "ssd")).rows[0]
		if row["NODE SELECTOR"] != "disk=ssd" {
			t.Errorf("NODE SELECTOR %q, want disk=ssd", row["NODE SELECTOR"])
		}
		k.mustKubectl(t, "delete", "ds", "ssd")
	})

	rolloutStatus := func(t *testing.T) {
		t.Helper()
		out := k.mustKubectl(t, "rollout", "status", "daemonset/agent", "--timeout=90s")
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		for _, l := range lines {
			if !daemonRolloutLine.MatchString(l) {
				t.Errorf("rollout status printed %q, not one of kubectl's DaemonSet lines", l)
			}
		}
		if last := lines[len(lines)-1]; last != `daemon set "agent" successfully rolled out` {
			t.Fatalf("rollout status ended with %q", last)
		}
	}
	// revisions are the REVISION column of `kubectl rollout history`.
	revisions := func(t *testing.T) []string {
		t.Helper()
		out := k.mustKubectl(t, "rollout", "history", "daemonset/agent")
		var revs []string
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 0 && regexp.MustCompile(`^\d+$`).MatchString(f[0]) {
				revs = append(revs, f[0])
			}
		}
		return revs
	}

	t.Run("a new image rolls out node by node", func(t *testing.T) {
		k.mustKubectl(t, "set", "image", "daemonset/agent", "agent=nginx:1.26")
		rolloutStatus(t)
		onlyOn(t, "app=agent", "nginx:1.26", "node01", "node02", "node03")
		if got := revisions(t); !slices.Equal(got, []string{"1", "2"}) {
			t.Errorf("rollout history revisions %v, want [1 2]", got)
		}
		out := k.mustKubectl(t, "rollout", "history", "daemonset/agent", "--revision=2")
		if !strings.Contains(out, "nginx:1.26") {
			t.Errorf("revision 2 does not show the new image:\n%s", out)
		}
	})

	t.Run("kubectl rollout undo brings the first template back as revision 3", func(t *testing.T) {
		k.mustKubectl(t, "rollout", "undo", "daemonset/agent")
		rolloutStatus(t)
		onlyOn(t, "app=agent", "nginx:1.25", "node01", "node02", "node03")
		if got := revisions(t); !slices.Equal(got, []string{"2", "3"}) {
			t.Errorf("rollout history revisions %v, want [2 3]: revision 1 renumbered 3", got)
		}
		hashes := k.mustKubectl(t, "get", "pods", "-l", "app=agent", "-o", `jsonpath={.items[*].metadata.labels.controller-revision-hash}`)
		cur := k.mustKubectl(t, "get", "controllerrevisions", "-l", "app=agent", "-o", `jsonpath={range .items[?(@.revision==3)]}{.metadata.labels.controller-revision-hash}{end}`)
		for _, h := range strings.Fields(hashes) {
			if h != cur {
				t.Errorf("a pod has controller-revision-hash %s, want revision 3's %s", h, cur)
			}
		}
	})

	t.Run("deleting the DaemonSet deletes its pods and revisions", func(t *testing.T) {
		out := k.mustKubectl(t, "get", "controllerrevisions")
		if !strings.Contains(out, "daemonset.apps/agent") {
			t.Errorf("kubectl get controllerrevisions does not name the controller:\n%s", out)
		}
		k.mustKubectl(t, "delete", "daemonset", "agent")
		testserver.EventuallyWithin(t, 60*time.Second, "no agent pods nor revisions", func() (bool, string) {
			pods := k.mustKubectl(t, "get", "pods", "-l", "app=agent", "-o", "name")
			revs := k.mustKubectl(t, "get", "controllerrevisions", "-l", "app=agent", "-o", "name")
			return strings.TrimSpace(pods+revs) == "", pods + revs
		})
	})
}
