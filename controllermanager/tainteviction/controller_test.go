package tainteviction_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/controllermanager/tainteviction"
	"github.com/mkube/mkube/internal/testserver"
)

// This file runs the controller against a real API server (embedded etcd,
// the apiserver package, HTTP), with a fake clock for the countdowns. No
// kubelet or scheduler runs: the test creates the Nodes and binds the pods
// itself, and since a pod bound to a node is deleted gracefully (the API
// server sets deletionTimestamp and waits for a kubelet that never comes),
// an eviction shows as deletionTimestamp, not as the pod disappearing.

// startAPIServer runs an API server for one test and returns a client of it.
func startAPIServer(t *testing.T) *client.Client {
	return client.New(testserver.Start(t), "tainteviction-test")
}

var check = corev1.Taint{Key: "check", Value: "mycheck", Effect: corev1.TaintEffectNoExecute}

func createNode(t *testing.T, c *client.Client, name string) {
	t.Helper()
	node := &corev1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(context.Background(), client.Nodes, "", node, node); err != nil {
		t.Fatal(err)
	}
}

// setTaints is kubectl taint: it replaces the node's taints.
func setTaints(t *testing.T, c *client.Client, name string, taints ...corev1.Taint) {
	t.Helper()
	ctx := context.Background()
	node := &corev1.Node{}
	if err := c.Get(ctx, client.Nodes, "", name, node); err != nil {
		t.Fatal(err)
	}
	node.Spec.Taints = taints
	if err := c.Update(ctx, client.Nodes, "", name, node, node); err != nil {
		t.Fatal(err)
	}
}

// createBoundPod creates a pod and binds it to node as the scheduler
// would: POST pods/NAME/binding.
func createBoundPod(t *testing.T, c *client.Client, name, node string, grace *int64, tolerations ...corev1.Toleration) {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "myapp", Image: "soscscs/myapp:v1"}},
			Tolerations: tolerations, TerminationGracePeriodSeconds: grace},
	}
	if err := c.Create(ctx, client.Pods, "default", pod, pod); err != nil {
		t.Fatal(err)
	}
	b := &corev1.Binding{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Binding"},
		ObjectMeta: metav1.ObjectMeta{Name: name}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	if err := c.Post(ctx, client.Pods, "default", name, "binding", b); err != nil {
		t.Fatal(err)
	}
}

func getPod(t *testing.T, c *client.Client, name string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	if err := c.Get(context.Background(), client.Pods, "default", name, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// waitEvicted waits until the pod is being deleted, and returns it.
func waitEvicted(t *testing.T, c *client.Client, name string) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	testserver.Eventually(t, name+" gets a deletionTimestamp", func() (bool, string) {
		pod = getPod(t, c, name)
		return pod.DeletionTimestamp != nil, "deletionTimestamp not set"
	})
	return pod
}

func expectRunning(t *testing.T, c *client.Client, name, why string) {
	t.Helper()
	if pod := getPod(t, c, name); pod.DeletionTimestamp != nil {
		t.Fatalf("%s is being deleted (deletionTimestamp %v): %s", name, pod.DeletionTimestamp, why)
	}
}

// waitTimers waits until n evictions are scheduled: each is a timer on
// the fake clock, the pod key's AddAfter.
func waitTimers(t *testing.T, clk *clocktesting.FakeClock, n int) {
	t.Helper()
	testserver.Eventually(t, fmt.Sprintf("%d evictions scheduled", n), func() (bool, string) {
		return clk.Waiters() == n, fmt.Sprintf("%d timers", clk.Waiters())
	})
}

// waitEvents waits until the TaintManagerEviction events include want.
func waitEvents(t *testing.T, c *client.Client, want ...string) {
	t.Helper()
	testserver.Eventually(t, fmt.Sprintf("events %q", want), func() (bool, string) {
		var evs corev1.EventList
		if err := c.List(context.Background(), client.Events, "default", client.ListOptions{FieldSelector: "reason=TaintManagerEviction"}, &evs); err != nil {
			return false, err.Error()
		}
		var got []string
		for _, ev := range evs.Items {
			if ev.Type != corev1.EventTypeNormal || ev.InvolvedObject.Kind != "Pod" {
				return false, fmt.Sprintf("event %q is %s about a %s", ev.Message, ev.Type, ev.InvolvedObject.Kind)
			}
			got = append(got, ev.Message)
		}
		for _, w := range want {
			if !slices.Contains(got, w) {
				return false, fmt.Sprintf("%q", got)
			}
		}
		return true, ""
	})
}

func TestTaintEvictionAgainstARealAPIServer(t *testing.T) {
	c := startAPIServer(t)
	createNode(t, c, "node01")
	createNode(t, c, "node02")
	grace, sixty := int64(5), int64(60)
	tolerate60s := corev1.Toleration{Key: "check", Operator: corev1.TolerationOpEqual, Value: "mycheck",
		Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &sixty}
	createBoundPod(t, c, "web-intolerant", "node01", &grace)
	createBoundPod(t, c, "web-60s", "node01", nil, tolerate60s)
	createBoundPod(t, c, "web-rescued", "node02", nil, tolerate60s)

	clk := clocktesting.NewFakeClock(time.Now())
	log := slog.New(slog.NewTextHandler(t.Output(), nil))
	d := controller.NewDeps(c, log, clk)
	// One worker: keys are synced in the order they are queued, which the
	// last step relies on.
	ctrl := tainteviction.New(d, tainteviction.Options{Workers: 1})
	testserver.Background(t, d.Run)
	testserver.Background(t, ctrl.Run)

	// kubectl taint node node02 check=mycheck:NoExecute: web-rescued
	// tolerates it for 60s, so its eviction is scheduled, a first timer.
	setTaints(t, c, "node02", check)
	waitTimers(t, clk, 1)

	// kubectl taint node node01 check=mycheck:NoExecute
	setTaints(t, c, "node01", check)
	t.Run("the pod that does not tolerate the taint is deleted at once, with its own grace period", func(t *testing.T) {
		pod := waitEvicted(t, c, "web-intolerant")
		if g := pod.DeletionGracePeriodSeconds; g == nil || *g != grace {
			t.Errorf("deletionGracePeriodSeconds = %v, want the pod's terminationGracePeriodSeconds, %d", g, grace)
		}
	})
	waitTimers(t, clk, 2) // web-60s's eviction is the second timer
	expectRunning(t, c, "web-60s", "it tolerates the taint for 60s and the clock has not moved")

	// 30s later: kubectl taint node node02 check=mycheck:NoExecute-
	clk.Step(30 * time.Second)
	setTaints(t, c, "node02")
	waitEvents(t, c, "Cancelling deletion of Pod default/web-rescued")

	t.Run("the pod tolerating the taint for 60s is still running after 59s", func(t *testing.T) {
		clk.Step(29 * time.Second)
		if n := clk.Waiters(); n != 2 {
			t.Fatalf("%d timers waiting, want both: neither deadline has come", n)
		}
		expectRunning(t, c, "web-60s", "59s < 60s")
	})

	clk.Step(time.Second)
	t.Run("the pod tolerating the taint for 60s is deleted after 60s", func(t *testing.T) {
		waitEvicted(t, c, "web-60s")
	})
	t.Run("the pod whose taint was removed in time keeps running", func(t *testing.T) {
		// Its timer was set first, so it fired first: with one worker, its
		// key was synced, and found nothing to do, before web-60s's was.
		expectRunning(t, c, "web-rescued", "its node's taint was removed 30s before the deadline")
	})
	t.Run("each eviction and cancellation is an event on the pod", func(t *testing.T) {
		waitEvents(t, c, "Marking for deletion Pod default/web-intolerant", "Marking for deletion Pod default/web-60s",
			"Cancelling deletion of Pod default/web-rescued")
	})
}
