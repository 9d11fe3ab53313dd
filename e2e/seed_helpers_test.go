package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// seedRun is the cluster the subtests share and the kubectl they type into.
type seedRun struct {
	c *cluster
	k *kubectlRunner
}

// podsWide is kubectl get pods -l selector -o wide: its output and rows.
func (s *seedRun) podsWide(t *testing.T, selector string) (string, []map[string]string) {
	t.Helper()
	out, errOut, code := s.k.kubectl(t, "get", "pods", "-l", selector, "-o", "wide")
	if code != 0 {
		t.Fatalf("kubectl get pods -l %s -o wide: exit %d: %s", selector, code, errOut)
	}
	if out == "" {
		return errOut, nil
	}
	return out, parseTable(t, out).rows
}

// runningPods waits until selector has exactly n pods, all Running and
// ready (a pod being deleted shows Terminating), and returns their rows.
func (s *seedRun) runningPods(t *testing.T, selector string, n int) []map[string]string {
	t.Helper()
	var rows []map[string]string
	testserver.EventuallyWithin(t, 30*time.Second, fmt.Sprintf("%d pods -l %s are Running", n, selector), func() (bool, string) {
		var out string
		out, rows = s.podsWide(t, selector)
		if len(rows) != n {
			return false, out
		}
		for _, r := range rows {
			if r["STATUS"] != "Running" || r["READY"] != "1/1" {
				return false, out
			}
		}
		return true, out
	})
	return rows
}

// runningOn waits until the pod is Running and returns its NODE column.
func (s *seedRun) runningOn(t *testing.T, name string) string {
	t.Helper()
	var node string
	testserver.EventuallyWithin(t, 30*time.Second, "pod "+name+" is Running", func() (bool, string) {
		out, errOut, code := s.k.kubectl(t, "get", "pod", name, "-o", "wide")
		if code != 0 {
			return false, errOut
		}
		r := parseTable(t, out).rows[0]
		node = r["NODE"]
		return r["STATUS"] == "Running" && r["READY"] == "1/1", out
	})
	return node
}

// pending waits until the scheduler has given up on the pod with message
// (its PodScheduled condition), then checks what kubectl shows of it: no
// node in get -o wide, and the FailedScheduling event in describe.
func (s *seedRun) pending(t *testing.T, name, message string) {
	t.Helper()
	want := "|Pending|False|Unschedulable|" + message
	testserver.EventuallyWithin(t, 30*time.Second, "pod "+name+" is Unschedulable with "+message, func() (bool, string) {
		out, errOut, _ := s.k.kubectl(t, "get", "pod", name, "-o",
			`jsonpath={.spec.nodeName}|{.status.phase}|{.status.conditions[?(@.type=="PodScheduled")].status}|{.status.conditions[?(@.type=="PodScheduled")].reason}|{.status.conditions[?(@.type=="PodScheduled")].message}`)
		return out == want, "nodeName|phase|PodScheduled status|reason|message = " + out + errOut
	})
	r := parseTable(t, s.k.mustKubectl(t, "get", "pod", name, "-o", "wide")).rows[0]
	if r["STATUS"] != "Pending" || r["NODE"] != "<none>" || r["READY"] != "0/1" {
		t.Errorf("kubectl get pod %s -o wide: %v, want Pending, 0/1 and NODE <none>", name, r)
	}
	testserver.EventuallyWithin(t, 20*time.Second, "describe pod "+name+" shows the FailedScheduling event", func() (bool, string) {
		out := s.k.mustKubectl(t, "describe", "pod", name)
		return slices.ContainsFunc(section(out, "Events:"), func(l string) bool {
			f := strings.Fields(l)
			// AGE may read "5s (x2 over 9s)" when the event repeats.
			return len(f) > 4 && f[0] == "Warning" && f[1] == "FailedScheduling" &&
				strings.Contains(l, "  default-scheduler  ") && strings.HasSuffix(l, "  "+message)
		}), out
	})
}

// pendingPods waits until selector has exactly n pods and checks each is
// Pending with message; it returns their names.
func (s *seedRun) pendingPods(t *testing.T, selector string, n int, message string) []string {
	t.Helper()
	var names []string
	testserver.EventuallyWithin(t, 30*time.Second, fmt.Sprintf("%d pods -l %s exist", n, selector), func() (bool, string) {
		out, rows := s.podsWide(t, selector)
		names = nil
		for _, r := range rows {
			if r["STATUS"] != "Terminating" {
				names = append(names, r["NAME"])
			}
		}
		return len(rows) == n && len(names) == n, out
	})
	for _, name := range names {
		s.pending(t, name, message)
	}
	return names
}

// gone waits until kubectl get pod NAME answers NotFound.
func (s *seedRun) gone(t *testing.T, name string, timeout time.Duration) {
	t.Helper()
	testserver.EventuallyWithin(t, timeout, "pod "+name+" is deleted", func() (bool, string) {
		out, errOut, code := s.k.kubectl(t, "get", "pod", name, "-o", "wide")
		return code != 0 && strings.Contains(errOut, `pods "`+name+`" not found`), out + errOut
	})
}

// keepsRunning checks that the pods stay Running, and are not marked for
// deletion, until the deadline. kubectl get pods --watch prints every pod
// as listed, then every change to one from that list on, so no change goes
// unseen between two looks; the deadline ends it.
func (s *seedRun) keepsRunning(t *testing.T, until time.Time, names ...string) {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), until)
	cmd := s.k.command(ctx, "get", "pods", "--watch", "-o", `jsonpath={.metadata.name} {.status.phase} {.metadata.deletionTimestamp}{"\n"}`)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	seen := map[string]bool{}
	for sc := bufio.NewScanner(stdout); sc.Scan(); {
		f := strings.SplitN(sc.Text(), " ", 3) // name, phase, deletionTimestamp
		if len(f) != 3 || !slices.Contains(names, f[0]) {
			continue
		}
		seen[f[0]] = true
		if f[1] != "Running" || f[2] != "" {
			t.Fatalf("%s, %s before the deadline: phase %q, deletionTimestamp %q", f[0], time.Until(until).Round(100*time.Millisecond), f[1], f[2])
		}
	}
	if left := time.Until(until); left > 0 {
		t.Fatalf("kubectl get pods --watch ended %s early: %s", left.Round(100*time.Millisecond), stderr.String())
	}
	for _, name := range names {
		if !seen[name] {
			t.Errorf("kubectl get pods --watch did not list %s", name)
		}
	}
}

// taints is the node's taints as key=value:effect lines.
func (s *seedRun) taints(t *testing.T, node string) string {
	t.Helper()
	return s.k.mustKubectl(t, "get", "node", node, "-o", `jsonpath={range .spec.taints[*]}{.key}={.value}:{.effect}{"\n"}{end}`)
}

// events is kubectl get events as reason|object|message lines.
func (s *seedRun) events(t *testing.T) []string {
	t.Helper()
	out := s.k.mustKubectl(t, "get", "events", "-o", `jsonpath={range .items[*]}{.reason}|{.involvedObject.name}|{.message}{"\n"}{end}`)
	return strings.Split(strings.TrimRight(out, "\n"), "\n")
}

// explain runs mkube explain pod NAME and returns its output.
func (s *seedRun) explain(t *testing.T, name string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "mkube"), "explain", "pod", name, "--server", s.c.URL)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mkube explain pod %s: %v\n%s", name, err, out)
	}
	return string(out)
}

func (s *seedRun) wantExplainPending(t *testing.T, name, message string) {
	t.Helper()
	want := fmt.Sprintf("Pod default/%s is Pending (Unschedulable):\n  %s\n", name, message)
	if out := s.explain(t, name); out != want {
		t.Errorf("mkube explain pod %s:\n%s\nwant:\n%s", name, out, want)
	}
}

// reset puts the cluster back as the subtests expect to find it: no
// Deployments or pods in default, no myname or myclass labels, only the
// nodes' own taints, nothing cordoned.
func (s *seedRun) reset(t *testing.T) {
	t.Helper()
	s.k.mustKubectl(t, "delete", "deployments", "--all", "--cascade=foreground", "--timeout=60s")
	s.k.mustKubectl(t, "delete", "pods", "--all", "--timeout=60s")
	testserver.EventuallyWithin(t, 60*time.Second, "no pods are left", func() (bool, string) {
		out, errOut, _ := s.k.kubectl(t, "get", "pods", "-o", "wide")
		return out == "", out + errOut
	})
	for _, n := range seedNodes {
		s.k.mustKubectl(t, "uncordon", n.name)
		s.k.mustKubectl(t, "label", "node", n.name, "myname-", "myclass-")
		have := s.taints(t, n.name)
		for _, line := range strings.Split(strings.TrimRight(have, "\n"), "\n") {
			if line != "" && !strings.Contains(seedBaseTaints[n.name], line+"\n") {
				key, effect := line[:strings.Index(line, "=")], line[strings.LastIndex(line, ":")+1:]
				s.k.mustKubectl(t, "taint", "node", n.name, key+":"+effect+"-")
			}
		}
		for _, line := range strings.Split(strings.TrimRight(seedBaseTaints[n.name], "\n"), "\n") {
			if line != "" && !strings.Contains(have, line+"\n") {
				s.k.mustKubectl(t, "taint", "node", n.name, strings.Replace(line, "=:", ":", 1))
			}
		}
		if got := s.taints(t, n.name); got != seedBaseTaints[n.name] {
			t.Fatalf("reset: %s has taints %q, want %q", n.name, got, seedBaseTaints[n.name])
		}
	}
}

// eventReasons are the REASON cells of describe's Events section.
func eventReasons(describe string) map[string]bool {
	reasons := map[string]bool{}
	for _, l := range section(describe, "Events:") {
		if f := strings.Fields(l); len(f) > 2 {
			reasons[f[1]] = true
		}
	}
	return reasons
}
