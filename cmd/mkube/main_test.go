package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/testserver"
	"github.com/mkube/mkube/scheduler"
	"github.com/mkube/mkube/scheduler/explanation"
)

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand prints the usage", nil, "usage: mkube explain pod NAME"},
		{"explain needs a pod", []string{"explain"}, "explain what? mkube explains pods"},
		{"only pods can be explained", []string{"explain", "node", "node01"}, `cannot explain "node node01"`},
		{"an unknown flag is refused", []string{"explain", "pod", "web", "--watch"}, "flag provided but not defined: -watch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), tt.args, &stdout, &stderr); code != 2 {
				t.Errorf("exit code %d, want 2", code)
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.want)
			}
		})
	}
}

func TestPodNameForms(t *testing.T) {
	for _, words := range [][]string{{"pod", "web"}, {"pods", "web"}, {"po", "web"}, {"pod/web"}} {
		if name, err := podName(words); err != nil || name != "web" {
			t.Errorf("%v → %q, %v", words, name, err)
		}
	}
}

// TestExplainAgainstAPIServer runs an API server (embedded etcd), the
// scheduler and `mkube explain` in this process, on the seed's examples.
func TestExplainAgainstAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := testserver.Start(t)
	c := client.New(url, "mkube-test")
	logs := &testserver.LogBuffer{}
	s, err := scheduler.New(scheduler.Config{Client: c, Log: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	defer func() {
		cancel()
		<-done
		if t.Failed() {
			t.Log("scheduler log:\n" + logs.String())
		}
	}()

	// Seed 三: node01 and node02 labelled myname=liliang and scj; all three
	// nodes in one myclass domain.
	for _, n := range []*corev1.Node{
		node("node01", "myname", "liliang", "myclass", "a"),
		node("node02", "myname", "scj", "myclass", "a"),
		node("node03", "myclass", "a"),
	} {
		if err := c.Create(ctx, client.Nodes, "", n, nil); err != nil {
			t.Fatal(err)
		}
	}
	create := func(name string, labels map[string]string, affinity *corev1.Affinity) {
		t.Helper()
		if err := c.Create(ctx, client.Pods, "default", pod(name, labels, affinity), nil); err != nil {
			t.Fatal(err)
		}
	}
	appIsNodeAffinityPod := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "node-affinity-pod"}}

	// Seed 三.3 pod1.yaml.
	create("affinity", map[string]string{"app": "node-affinity-pod"}, &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "myname", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"liliang", "scj"}}}}}}}})
	waitBound(t, c, "affinity", "node03")

	// A pod that wants to be next to it, finding its namespace through a
	// namespaceSelector on the label the API server puts on every namespace.
	create("follower", nil, &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey:       corev1.LabelHostname,
			LabelSelector:     appIsNodeAffinityPod,
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "default"}}}}}})
	// Seed 三.3 pod2.yaml: the weight-1 preference for node03.
	create("preferring", nil, &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: corev1.NodeSelectorTerm{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"node03"}}}}}}}})
	// Seed 三.3 anti-affinity on myclass: every node is in the domain.
	create("myapp-demo8", nil, &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: "myclass", LabelSelector: appIsNodeAffinityPod, Namespaces: []string{"default"}}}}})
	waitBound(t, c, "follower", "node03")
	waitBound(t, c, "preferring", "node03")

	explain := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := run(ctx, append([]string{"explain", "pod"}, append(args, "--server", url)...), &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		t.Log("mkube explain pod " + strings.Join(args, " ") + "\n" + stdout.String()) // go test -v shows it
		return stdout.String()
	}

	t.Run("the binding's explanation is on the pod, and the Scheduled event keeps Kubernetes' sentence", func(t *testing.T) {
		pod := &corev1.Pod{}
		if err := c.Get(ctx, client.Pods, "default", "affinity", pod); err != nil {
			t.Fatal(err)
		}
		e, err := explanation.Decode(pod.Annotations[explanation.AnnotationKey])
		if err != nil {
			t.Fatal(err)
		}
		if e.Node != "node03" || e.Nodes != 3 || e.Feasible != 1 || len(e.Rejected) != 2 || e.Rejected[0].Plugin != "NodeAffinity" {
			t.Errorf("explanation = %+v", e)
		}
		testserver.Eventually(t, "the Scheduled event", func() (bool, string) {
			var list corev1.EventList
			if err := c.List(ctx, client.Events, "default", client.ListOptions{FieldSelector: "involvedObject.name=affinity,reason=Scheduled"}, &list); err != nil {
				return false, err.Error()
			}
			if len(list.Items) == 0 {
				return false, "no Scheduled event"
			}
			return list.Items[0].Message == "Successfully assigned default/affinity to node03", "message " + list.Items[0].Message
		})
	})

	t.Run("seed 三.3: NotIn [liliang, scj] leaves node03, and the explanation says why the others were rejected", func(t *testing.T) {
		out := explain("affinity")
		for _, want := range []string{
			"Pod default/affinity was scheduled to node03.",
			"3 nodes in the cluster, 3 evaluated, 1 feasible.",
			"node03  selected  -      the only feasible node: not scored",
			"node01  rejected         NodeAffinity: node(s) didn't match Pod's node affinity/selector",
			"node02  rejected         NodeAffinity: node(s) didn't match Pod's node affinity/selector",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("a namespaceSelector on kubernetes.io/metadata.name finds the pod to be near", func(t *testing.T) {
		out := explain("-n", "default", "follower")
		if !strings.Contains(out, "node01  rejected         InterPodAffinity: node(s) didn't match pod affinity rules") {
			t.Errorf("output:\n%s", out)
		}
	})

	t.Run("seed 三.3: the weight-1 preference scores node03 100 under NodeAffinity×2", func(t *testing.T) {
		out := explain("preferring")
		lines := strings.Split(out, "\n")
		var header, node03 string
		for _, l := range lines {
			if strings.HasPrefix(l, "NODE") {
				header = l
			}
			if strings.HasPrefix(l, "node03") {
				node03 = l
			}
		}
		col := strings.Index(header, "NodeAffinity×2")
		if col < 0 || !strings.Contains(node03, "selected") || !strings.HasPrefix(strings.TrimSpace(runeSlice(node03, runeIndex(header, col))), "100") {
			t.Errorf("node03 should be selected with NodeAffinity 100:\n%s", out)
		}
	})

	t.Run("seed 三.3: the anti-affinity pod is Pending and explain prints why", func(t *testing.T) {
		// Every pod has priority 0: preemption finds nothing to evict.
		want := "Pod default/myapp-demo8 is Pending (Unschedulable):\n  0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. " +
			"preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod..\n"
		testserver.Eventually(t, "myapp-demo8's PodScheduled=False", func() (bool, string) {
			got := explain("myapp-demo8")
			return got == want, got
		})
	})

	t.Run("a pod that does not exist is reported as the API server words it", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		if code := run(ctx, []string{"explain", "pod", "nope", "--server", url}, &stdout, &stderr); code != 1 {
			t.Errorf("exit %d", code)
		}
		if !strings.Contains(stderr.String(), `Error from server (NotFound): pods "nope" not found`) {
			t.Errorf("stderr %q", stderr.String())
		}
	})
}

// node is a Ready node with room for pods, labelled with kv pairs.
func node(name string, kv ...string) *corev1.Node {
	labels := map[string]string{corev1.LabelHostname: name}
	for i := 0; i+1 < len(kv); i += 2 {
		labels[kv[i]] = kv[i+1]
	}
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: corev1.NodeStatus{Allocatable: alloc, Capacity: alloc,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
}

// pod is a one-container pod requesting cpu 100m and memory 128Mi.
func pod(name string, labels map[string]string, affinity *corev1.Affinity) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels},
		Spec: corev1.PodSpec{Affinity: affinity, Containers: []corev1.Container{{Name: "myapp", Image: "soscscs/myapp:v1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}}}}},
	}
}

// runeIndex converts a byte offset of s into a rune offset.
func runeIndex(s string, byteOffset int) int { return len([]rune(s[:byteOffset])) }

// runeSlice is s from rune offset i.
func runeSlice(s string, i int) string {
	r := []rune(s)
	if i > len(r) {
		return ""
	}
	return string(r[i:])
}

func waitBound(t *testing.T, c *client.Client, name, node string) {
	t.Helper()
	testserver.Eventually(t, name+" bound to "+node, func() (bool, string) {
		pod := &corev1.Pod{}
		if err := c.Get(context.Background(), client.Pods, "default", name, pod); err != nil {
			t.Fatal(err)
		}
		if pod.Spec.NodeName != "" && pod.Spec.NodeName != node {
			t.Fatalf("%s bound to %s, want %s", name, pod.Spec.NodeName, node)
		}
		return pod.Spec.NodeName == node, "not bound yet"
	})
}
