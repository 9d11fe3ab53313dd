package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chromedp/chromedp"
)

// A learner opens the dashboard (bin/dashboard, package dashboard) in a
// real browser, then creates a Deployment of three pods with the real
// kubectl: the page shows what they would otherwise merge five logs for.
func TestDashboardShowsADeploymentsPodsTheirStepsAndTheWatchStream(t *testing.T) {
	b := newBrowser(t)
	c := startCluster(t, nil, "node01", "node02", "node03")
	k := newKubectl(t, c)
	// The learner's plain port: system:masters, so the fault buttons work.
	url := startDashboard(t, c, "--server", c.URL)
	b.do(t, chromedp.Navigate(url))
	b.waitTrue(t, "the stream live", `document.getElementById("conn").textContent === "live"`)
	b.waitTrue(t, "three nodes", `document.querySelectorAll(".node[data-node^=node0]").length === 3`)

	k.mustKubectl(t, "create", "deployment", "web", "--image=nginx", "--replicas=3")

	t.Run("the three pods appear and turn Running and ready", func(t *testing.T) {
		b.waitTrue(t, "3 Running ready web pods", `document.querySelectorAll('.pod[data-pod^="default/web-"][data-phase=Running][data-ready=true]').length === 3`)
		// Each under the node the API says it is bound to.
		var pods corev1.PodList
		c.do("GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb", "", nil, &pods)
		for _, p := range pods.Items {
			js := fmt.Sprintf(`!!document.querySelector('.node[data-node=%q] .pod[data-pod="default/%s"]')`, p.Spec.NodeName, p.Name)
			if !evalJS[bool](t, b, js) {
				t.Errorf("pod %s is not drawn under its node %s", p.Name, p.Spec.NodeName)
			}
		}
		b.screenshot(t, "#cluster", "dashboard-cluster.png")
	})

	var pod corev1.Pod
	var pods corev1.PodList
	c.do("GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb", "", nil, &pods)
	if len(pods.Items) != 3 {
		t.Fatalf("%d web pods, want 3", len(pods.Items))
	}
	slices.SortFunc(pods.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	pod = pods.Items[0]
	b.do(t, chromedp.Click(chromedp.CSS(fmt.Sprintf(`.pod[data-pod="default/%s"]`, pod.Name))))

	t.Run("one pod's 13 steps are listed in order, with the API's own times", func(t *testing.T) {
		b.waitTrue(t, "13 steps with step 13 observed", `document.querySelectorAll("#steps-table tr.step").length === 13 && !!document.querySelector('#steps-table tr.step[data-step="13"][data-at]')`)
		type record struct{ At, Source string }
		type step struct {
			N       string
			At      string
			Records []record
		}
		steps := evalJS[[]step](t, b, `[...document.querySelectorAll("#steps-table tr.step")].map(tr => ({N: tr.dataset.step, At: tr.dataset.at || "",
			Records: [...tr.querySelectorAll("li[data-at]")].map(li => ({At: li.dataset.at, Source: li.dataset.source}))}))`)
		for i, s := range steps {
			if s.N != fmt.Sprint(i+1) {
				t.Fatalf("row %d is step %s, want %d", i, s.N, i+1)
			}
		}
		// The times the page gives for the steps the API records are the
		// API's own timestamps.
		c.do("GET", "/api/v1/namespaces/default/pods/"+pod.Name, "", nil, &pod)
		var dep appsv1.Deployment
		c.do("GET", "/apis/apps/v1/namespaces/default/deployments/web", "", nil, &dep)
		want := map[int]map[string]metav1.Time{
			3:  {"Deployment default/web metadata.creationTimestamp": dep.CreationTimestamp},
			7:  {"pod metadata.creationTimestamp": pod.CreationTimestamp},
			10: {"pod condition PodScheduled lastTransitionTime": conditionTime(pod, corev1.PodScheduled)},
			12: {"pod status.startTime": *pod.Status.StartTime,
				"containerStatuses[nginx].state.running.startedAt": pod.Status.ContainerStatuses[0].State.Running.StartedAt},
			13: {"pod condition Ready lastTransitionTime": conditionTime(pod, corev1.PodReady)},
		}
		for n, sources := range want {
			for source, at := range sources {
				i := slices.IndexFunc(steps[n-1].Records, func(r record) bool { return r.Source == source })
				if i < 0 {
					t.Errorf("step %d lists no record %q: %+v", n, source, steps[n-1].Records)
					continue
				}
				got, err := time.Parse(time.RFC3339Nano, steps[n-1].Records[i].At)
				if err != nil || !got.Equal(at.Time) {
					t.Errorf("step %d %s: the page says %s, the API %s", n, source, steps[n-1].Records[i].At, at.UTC().Format(time.RFC3339))
				}
			}
		}
		// In order: each observed step no earlier than the one before.
		// API times are kept to the second, and an Event (step 6's
		// SuccessfulCreate) is written just after the create it reports:
		// a step may read up to a second before the one it follows.
		var last time.Time
		for _, s := range steps {
			if s.At == "" {
				continue
			}
			at, err := time.Parse(time.RFC3339Nano, s.At)
			if err != nil {
				t.Fatal(err)
			}
			if at.Before(last.Add(-time.Second)) {
				t.Errorf("step %s at %s comes before the step before it, at %s", s.N, s.At, last)
			}
			if at.After(last) {
				last = at
			}
		}
		// Steps 1, 2 and 4 leave no record: the page says so.
		for _, n := range []int{1, 2, 4} {
			if steps[n-1].At != "" {
				t.Errorf("step %d shows a time: no record has it", n)
			}
			js := fmt.Sprintf(`document.querySelector('#steps-table tr.step[data-step="%d"]').innerText.includes("not observable here")`, n)
			if !evalJS[bool](t, b, js) {
				t.Errorf("step %d does not say it is not observable", n)
			}
		}
		b.screenshot(t, "#steps", "dashboard-steps.png")
	})

	t.Run("the explanation table lists every node", func(t *testing.T) {
		b.waitTrue(t, "the explanation table", `document.querySelectorAll("#explain-table tbody tr[data-node]").length > 0`)
		rows := evalJS[map[string]string](t, b, `Object.fromEntries([...document.querySelectorAll("#explain-table tbody tr[data-node]")].map(tr => [tr.dataset.node, tr.dataset.verdict]))`)
		for _, n := range []string{"node01", "node02", "node03"} {
			if _, ok := rows[n]; !ok {
				t.Errorf("the explanation table has no row for %s: %v", n, rows)
			}
		}
		if rows[pod.Spec.NodeName] != "selected" {
			t.Errorf("the pod's node %s is %q in the table, want selected", pod.Spec.NodeName, rows[pod.Spec.NodeName])
		}
		b.screenshot(t, "#explain", "dashboard-explain.png")
	})

	t.Run("a crash shows the restart", func(t *testing.T) {
		b.do(t, chromedp.Click(chromedp.ID("fault-crash")))
		b.waitTrue(t, "the crash done", `document.getElementById("fault-result").textContent.startsWith("crash: done")`)
		b.waitTrue(t, "a restart", fmt.Sprintf(`document.querySelector('.pod[data-pod="default/%s"]').dataset.restarts >= 1`, pod.Name))
		var p corev1.Pod
		c.do("GET", "/api/v1/namespaces/default/pods/"+pod.Name, "", nil, &p)
		if p.Status.ContainerStatuses[0].RestartCount < 1 {
			t.Errorf("the API says restartCount %d", p.Status.ContainerStatuses[0].RestartCount)
		}
	})

	b.screenshot(t, "body", "dashboard.png")

	t.Run("the watch stream shows ADDED, MODIFIED and DELETED", func(t *testing.T) {
		k.mustKubectl(t, "scale", "deployment", "web", "--replicas=2")
		for _, typ := range []string{"ADDED", "MODIFIED", "DELETED"} {
			b.waitTrue(t, "a Pod "+typ, fmt.Sprintf(`!!document.querySelector('#stream-table tr[data-type=%s][data-kind=Pod]')`, typ))
		}
		// The filter narrows the table to the words typed.
		filter := func(words string) {
			t.Helper()
			evalJS[bool](t, b, fmt.Sprintf(`(f => { f.value = %q; f.dispatchEvent(new Event("input")); return true })(document.getElementById("stream-filter"))`, words))
		}
		filter("Pod DELETED")
		b.waitTrue(t, "only Pod DELETED rows", `[...document.querySelectorAll("#stream-table tbody tr")].every(tr => tr.dataset.type === "DELETED" && tr.dataset.kind === "Pod")`)
		// The snapshot the page started from, on request.
		filter("")
		b.do(t, chromedp.Click(chromedp.ID("stream-listed")))
		b.waitTrue(t, "the snapshot's nodes", `[...document.querySelectorAll("#stream-table tbody tr[data-type=LISTED][data-kind=Node]")].length === 3`)
		b.do(t, chromedp.Click(chromedp.ID("stream-listed")))
		filter("Pod")
		b.waitTrue(t, "Pod rows of every type", `["ADDED", "MODIFIED", "DELETED"].every(typ => [...document.querySelectorAll("#stream-table tbody tr")].some(tr => tr.dataset.type === typ))`)
		b.screenshot(t, "#stream", "dashboard-stream.png")
	})

	t.Run("the numbers view draws the pending pods of its first sample", func(t *testing.T) {
		// Without metrics-server the metrics API's own error is shown.
		b.waitTrue(t, "the pods Pending chart", `!!document.querySelector('#chart-list .chart[data-title="pods Pending"] canvas')`)
		if got := evalJS[string](t, b, `document.getElementById("charts-errors").textContent`); !strings.Contains(got, "node metrics: ") {
			t.Errorf("the numbers view does not say the metrics API is missing: %q", got)
		}
		// Without --scheduler-metrics and --controller-manager-metrics,
		// each component's chart says so.
		notes := evalJS[[]string](t, b, `[...document.querySelectorAll("#component-charts .chart")].map(c => c.dataset.component + ": " + c.querySelector(".chart-note").textContent)`)
		want := []string{"scheduler: not configured (--scheduler-metrics)", "scheduler: not configured (--scheduler-metrics)",
			"controller-manager: not configured (--controller-manager-metrics)", "controller-manager: not configured (--controller-manager-metrics)"}
		if !slices.Equal(notes, want) {
			t.Errorf("the components' charts say %q, want %q", notes, want)
		}
	})

	if opens := evalJS[int](t, b, `mkube.opens`); opens != 1 {
		t.Errorf("the event stream opened %d times, want once", opens)
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Errorf("JavaScript errors on the page:\n%s", strings.Join(errs, "\n"))
	}
}

// Without permission, a fault button answers 403 in Kubernetes' words and
// changes nothing: the dashboard runs on its own kubeconfig
// (dashboard.kubeconfig, user mkube:dashboard), whose ClusterRole
// mkube:dashboard only reads.
func TestDashboardFaultButtonIsForbiddenToAReadOnlyDashboard(t *testing.T) {
	b := newBrowser(t)
	c := startClusterWith(t, clusterFlags{secure: true}, kubeletNode{name: "node01"})
	url := startDashboard(t, c, "--kubeconfig", filepath.Join(c.certDir(), "dashboard.kubeconfig"))
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "victim"},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx"}}}}
	if code := c.do("POST", "/api/v1/namespaces/default/pods", "application/json", pod, nil); code != http.StatusCreated {
		t.Fatalf("create pod: %d", code)
	}
	b.do(t, chromedp.Navigate(url))
	b.waitTrue(t, "the pod Running", `!!document.querySelector('.pod[data-pod="default/victim"][data-phase=Running]')`)
	b.waitTrue(t, "that faults are not allowed", `document.getElementById("faults-access").dataset.allowed === "false"`)
	b.do(t, chromedp.Click(chromedp.CSS(`.pod[data-pod="default/victim"]`)), chromedp.Click(chromedp.ID("fault-crash")))
	want := `Error from server (Forbidden): nodes "node01" is forbidden: User "mkube:dashboard" cannot create resource "nodes/proxy" in API group "" at the cluster scope`
	b.waitTrue(t, "the 403", `document.getElementById("fault-result").dataset.code === "403"`)
	if got := evalJS[string](t, b, `document.getElementById("fault-result").textContent`); got != want {
		t.Errorf("the page says\n  %s\nwant\n  %s", got, want)
	}
	b.screenshot(t, "#faults", "dashboard-faults-forbidden.png")

	// The dashboard passes the API server's Status through as it is.
	req, _ := http.NewRequest("POST", url+"/api/faults", strings.NewReader(`{"action":"crash","namespace":"default","pod":"victim"}`))
	req.Header.Set("X-Mkube-Dashboard", "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st metav1.Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusForbidden || st.Kind != "Status" || st.Reason != metav1.StatusReasonForbidden || st.Code != http.StatusForbidden {
		t.Errorf("POST /api/faults: %d %+v, want 403 Forbidden as a Status", resp.StatusCode, st)
	}
	// Nothing changed: the container never exited.
	var p corev1.Pod
	c.do("GET", "/api/v1/namespaces/default/pods/victim", "", nil, &p)
	if cs := p.Status.ContainerStatuses; len(cs) != 1 || cs[0].RestartCount != 0 || cs[0].State.Running == nil || cs[0].LastTerminationState.Terminated != nil {
		t.Errorf("the refused crash changed the container: %+v", cs)
	}
}

func conditionTime(p corev1.Pod, t corev1.PodConditionType) metav1.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.LastTransitionTime
		}
	}
	return metav1.Time{}
}
