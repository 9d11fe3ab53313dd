package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/internal/testserver"
)

const rsJSON = `{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web"},
 "spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},
  "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.25",
   "resources":{"requests":{"cpu":"500m","memory":"256Mi"}}}]}}}}`

const deployJSON = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"api"},
 "spec":{"replicas":2,"selector":{"matchLabels":{"app":"api"}},
  "template":{"metadata":{"labels":{"app":"api"}},"spec":{"containers":[{"name":"api","image":"busybox:1.36"}]}}}}`

// pods lists the pods of a label selector.
func (c *cluster) pods(selector string) []corev1.Pod {
	var list corev1.PodList
	c.do("GET", "/api/v1/namespaces/default/pods?labelSelector="+selector, "", nil, &list)
	return list.Items
}

// running returns the pods of selector, and whether there are exactly n
// of them, all Running, bound, with an IP and not being deleted.
func (c *cluster) running(selector string, n int) ([]corev1.Pod, bool) {
	pods := c.pods(selector)
	if len(pods) != n {
		return pods, false
	}
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning || p.Spec.NodeName == "" || p.DeletionTimestamp != nil || p.Status.PodIP == "" {
			return pods, false
		}
	}
	return pods, true
}

// nRunning is the condition "exactly n pods of selector are running", for
// testserver.EventuallyWithin.
func (c *cluster) nRunning(selector string, n int) func() (bool, string) {
	return func() (bool, string) {
		pods, ok := c.running(selector, n)
		return ok, podStates(pods)
	}
}

// podStates describes pods for a failure message: name, phase, node and
// whether it is being deleted, one pod a line.
func podStates(pods []corev1.Pod) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d pods", len(pods))
	for _, p := range pods {
		fmt.Fprintf(&b, "\n  %s %s node=%q ip=%q", p.Name, p.Status.Phase, p.Spec.NodeName, p.Status.PodIP)
		if p.DeletionTimestamp != nil {
			b.WriteString(" (being deleted)")
		}
	}
	return b.String()
}

func TestFoundationPodLifecycleThroughHTTP(t *testing.T) {
	t.Parallel()
	c := startCluster(t, []string{"--compaction-interval", "2s"}, "node01", "node02")
	testserver.EventuallyWithin(t, 30*time.Second, "both nodes are Ready", func() (bool, string) {
		var nodes corev1.NodeList
		c.do("GET", "/api/v1/nodes", "", nil, &nodes)
		var ready []string
		for _, n := range nodes.Items {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready = append(ready, n.Name)
				}
			}
		}
		return len(ready) == 2, fmt.Sprintf("%d nodes, Ready: %v", len(nodes.Items), ready)
	})

	// A watch from the first list's resourceVersion sees everything after.
	var first corev1.PodList
	c.do("GET", "/api/v1/pods", "", nil, &first)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := c.watch(ctx, "/api/v1/pods?resourceVersion="+first.ResourceVersion)

	// Steps 2-13: a ReplicaSet of 3 becomes 3 running pods, spread.
	if code := c.do("POST", "/apis/apps/v1/namespaces/default/replicasets", "application/json", rsJSON, nil); code != 201 {
		t.Fatalf("create replicaset: %d", code)
	}
	var pods []corev1.Pod
	testserver.EventuallyWithin(t, 60*time.Second, "3 web pods are Running", func() (ok bool, _ string) {
		pods, ok = c.running("app%3Dweb", 3)
		return ok, podStates(pods)
	})
	nodes := map[string]int{}
	for _, p := range pods {
		nodes[p.Spec.NodeName]++
		if ref := metav1.GetControllerOf(&p); ref == nil || ref.Kind != "ReplicaSet" || ref.Name != "web" {
			t.Errorf("pod %s is not controlled by the ReplicaSet: %v", p.Name, p.OwnerReferences)
		}
	}
	if len(nodes) != 2 {
		t.Errorf("pods are not spread over both nodes: %v", nodes)
	}

	// A deleted pod is replaced.
	victim := pods[0].Name
	c.do("DELETE", "/api/v1/namespaces/default/pods/"+victim, "", nil, nil)
	testserver.EventuallyWithin(t, 60*time.Second, "the deleted pod is replaced", func() (bool, string) {
		pods, ok := c.running("app%3Dweb", 3)
		for _, p := range pods {
			ok = ok && p.Name != victim
		}
		return ok, podStates(pods)
	})

	// Scale by merge patch, then by the scale subresource.
	c.do("PATCH", "/apis/apps/v1/namespaces/default/replicasets/web", "application/merge-patch+json", `{"spec":{"replicas":4}}`, nil)
	testserver.EventuallyWithin(t, 60*time.Second, "4 web pods are Running", c.nRunning("app%3Dweb", 4))
	var scale map[string]any
	if code := c.do("PATCH", "/apis/apps/v1/namespaces/default/replicasets/web/scale", "application/merge-patch+json", `{"spec":{"replicas":5}}`, &scale); code != 200 {
		t.Fatalf("scale: %d %v", code, scale)
	}
	testserver.EventuallyWithin(t, 60*time.Second, "5 web pods are Running", c.nRunning("app%3Dweb", 5))
	testserver.EventuallyWithin(t, 30*time.Second, "the ReplicaSet reports 5 ready replicas", func() (bool, string) {
		var rs appsv1.ReplicaSet
		c.do("GET", "/apis/apps/v1/namespaces/default/replicasets/web", "", nil, &rs)
		return rs.Status.Replicas == 5 && rs.Status.ReadyReplicas == 5 && rs.Status.ObservedGeneration == rs.Generation,
			fmt.Sprintf("status %+v, generation %d", rs.Status, rs.Generation)
	})

	// A PUT carrying an old resourceVersion is refused.
	var rs appsv1.ReplicaSet
	c.do("GET", "/apis/apps/v1/namespaces/default/replicasets/web", "", nil, &rs)
	rs.ResourceVersion = strconv.Itoa(mustAtoi(t, rs.ResourceVersion) - 1)
	var st metav1.Status
	if code := c.do("PUT", "/apis/apps/v1/namespaces/default/replicasets/web", "application/json", &rs, &st); code != 409 || st.Reason != metav1.StatusReasonConflict {
		t.Fatalf("stale PUT: %d %s", code, st.Reason)
	}

	// A Deployment makes a ReplicaSet, which makes the pods.
	if code := c.do("POST", "/apis/apps/v1/namespaces/default/deployments", "application/json", deployJSON, nil); code != 201 {
		t.Fatalf("create deployment: %d", code)
	}
	testserver.EventuallyWithin(t, 60*time.Second, "2 api pods are Running", c.nRunning("app%3Dapi", 2))
	var rsets appsv1.ReplicaSetList
	c.do("GET", "/apis/apps/v1/namespaces/default/replicasets?labelSelector=app%3Dapi", "", nil, &rsets)
	if len(rsets.Items) != 1 || metav1.GetControllerOf(&rsets.Items[0]).Name != "api" {
		t.Fatalf("the Deployment's ReplicaSet: %+v", rsets.Items)
	}

	// Deleting the owners removes what they own.
	c.do("DELETE", "/apis/apps/v1/namespaces/default/deployments/api", "", nil, nil)
	c.do("DELETE", "/apis/apps/v1/namespaces/default/replicasets/web", "", nil, nil)
	testserver.EventuallyWithin(t, 60*time.Second, "all dependents are gone", func() (bool, string) {
		var all corev1.PodList
		var rsl appsv1.ReplicaSetList
		c.do("GET", "/api/v1/pods", "", nil, &all)
		c.do("GET", "/apis/apps/v1/replicasets", "", nil, &rsl)
		return len(all.Items) == 0 && len(rsl.Items) == 0, fmt.Sprintf("%d pods, %d ReplicaSets", len(all.Items), len(rsl.Items))
	})

	// The watch saw every change, each at a higher resourceVersion. The
	// list is empty before the last DELETED events have reached this
	// watch, so read it until every pod it saw added it also saw go.
	seen := map[string]int{}
	last := mustAtoi(t, first.ResourceVersion)
	testserver.EventuallyWithin(t, 30*time.Second, "the watch saw every pod added, then deleted", func() (bool, string) {
		for more := true; more; {
			select {
			case ev, ok := <-events:
				if !ok {
					t.Fatalf("the watch ended early; it saw %v", seen)
				}
				rv := mustAtoi(t, ev.Object.Metadata.ResourceVersion)
				if rv <= last {
					t.Fatalf("%s %s at rv %d after rv %d", ev.Type, ev.Object.Metadata.Name, rv, last)
				}
				last = rv
				seen[ev.Type]++
			default:
				more = false
			}
		}
		// 5 web pods + 1 replacement... at least: every pod was added and deleted.
		return seen["ADDED"] >= 8 && seen["DELETED"] == seen["ADDED"], fmt.Sprint(seen)
	})
	cancel()
	if seen["MODIFIED"] < seen["ADDED"] {
		t.Fatalf("events seen: %v", seen)
	}

	// History older than the compaction is gone: 410 Expired.
	testserver.EventuallyWithin(t, 30*time.Second, "a watch from the first resourceVersion gets 410 Gone", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		ev, ok := <-c.watch(ctx, "/api/v1/pods?resourceVersion="+first.ResourceVersion)
		return ok && ev.Type == "ERROR" && ev.Object.Code == 410 && ev.Object.Reason == "Expired", fmt.Sprintf("first event %+v (stream open: %v)", ev, ok)
	})
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", s, err)
	}
	return n
}
