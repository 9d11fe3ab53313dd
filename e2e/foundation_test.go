package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// running returns the pods of selector that are Running, bound and not
// being deleted, if there are exactly n of them and no others.
func (c *cluster) running(selector string, n int) ([]corev1.Pod, bool) {
	pods := c.pods(selector)
	if len(pods) != n {
		return nil, false
	}
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning || p.Spec.NodeName == "" || p.DeletionTimestamp != nil || p.Status.PodIP == "" {
			return nil, false
		}
	}
	return pods, true
}

func TestFoundationPodLifecycleThroughHTTP(t *testing.T) {
	c := startCluster(t, []string{"--compaction-interval", "2s"}, "node01", "node02")
	c.eventually("both nodes are Ready", 30*time.Second, func() bool {
		var nodes corev1.NodeList
		c.do("GET", "/api/v1/nodes", "", nil, &nodes)
		ready := 0
		for _, n := range nodes.Items {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready == 2
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
	c.eventually("3 web pods are Running", 60*time.Second, func() (ok bool) { pods, ok = c.running("app%3Dweb", 3); return })
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
	c.eventually("the deleted pod is replaced", 60*time.Second, func() bool {
		pods, ok := c.running("app%3Dweb", 3)
		if !ok {
			return false
		}
		for _, p := range pods {
			if p.Name == victim {
				return false
			}
		}
		return true
	})

	// Scale by merge patch, then by the scale subresource.
	c.do("PATCH", "/apis/apps/v1/namespaces/default/replicasets/web", "application/merge-patch+json", `{"spec":{"replicas":4}}`, nil)
	c.eventually("4 web pods are Running", 60*time.Second, func() bool { _, ok := c.running("app%3Dweb", 4); return ok })
	var scale map[string]any
	if code := c.do("PATCH", "/apis/apps/v1/namespaces/default/replicasets/web/scale", "application/merge-patch+json", `{"spec":{"replicas":5}}`, &scale); code != 200 {
		t.Fatalf("scale: %d %v", code, scale)
	}
	c.eventually("5 web pods are Running", 60*time.Second, func() bool { _, ok := c.running("app%3Dweb", 5); return ok })
	c.eventually("the ReplicaSet reports 5 ready replicas", 30*time.Second, func() bool {
		var rs appsv1.ReplicaSet
		c.do("GET", "/apis/apps/v1/namespaces/default/replicasets/web", "", nil, &rs)
		return rs.Status.Replicas == 5 && rs.Status.ReadyReplicas == 5 && rs.Status.ObservedGeneration == rs.Generation
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
	c.eventually("2 api pods are Running", 60*time.Second, func() bool { _, ok := c.running("app%3Dapi", 2); return ok })
	var rsets appsv1.ReplicaSetList
	c.do("GET", "/apis/apps/v1/namespaces/default/replicasets?labelSelector=app%3Dapi", "", nil, &rsets)
	if len(rsets.Items) != 1 || metav1.GetControllerOf(&rsets.Items[0]).Name != "api" {
		t.Fatalf("the Deployment's ReplicaSet: %+v", rsets.Items)
	}

	// Deleting the owners removes what they own.
	c.do("DELETE", "/apis/apps/v1/namespaces/default/deployments/api", "", nil, nil)
	c.do("DELETE", "/apis/apps/v1/namespaces/default/replicasets/web", "", nil, nil)
	c.eventually("all dependents are gone", 60*time.Second, func() bool {
		var all corev1.PodList
		var rsl appsv1.ReplicaSetList
		c.do("GET", "/api/v1/pods", "", nil, &all)
		c.do("GET", "/apis/apps/v1/replicasets", "", nil, &rsl)
		return len(all.Items) == 0 && len(rsl.Items) == 0
	})

	// The watch saw every change, each at a higher resourceVersion.
	cancel()
	seen := map[string]int{}
	last := mustAtoi(t, first.ResourceVersion)
	for ev := range events {
		rv := mustAtoi(t, ev.Object.Metadata.ResourceVersion)
		if rv <= last {
			t.Fatalf("%s %s at rv %d after rv %d", ev.Type, ev.Object.Metadata.Name, rv, last)
		}
		last = rv
		seen[ev.Type]++
	}
	// 5 web pods + 1 replacement... at least: every pod was added and deleted.
	if seen["ADDED"] < 8 || seen["DELETED"] != seen["ADDED"] || seen["MODIFIED"] < seen["ADDED"] {
		t.Fatalf("events seen: %v", seen)
	}

	// History older than the compaction is gone: 410 Expired.
	c.eventually("a watch from the first resourceVersion gets 410 Gone", 30*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		ev, ok := <-c.watch(ctx, "/api/v1/pods?resourceVersion="+first.ResourceVersion)
		return ok && ev.Type == "ERROR" && ev.Object.Code == 410 && ev.Object.Reason == "Expired"
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

var _ = json.Marshal
var _ = fmt.Sprint
