package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/podcondition"
	"github.com/mkube/mkube/internal/testserver"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// TestSchedulerAgainstAPIServer runs the scheduler against a real API
// server with an embedded etcd, and follows pods through steps 9 and 10.
func TestSchedulerAgainstAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := client.New(testserver.Start(t), "scheduler-test")

	logs := runScheduler(t, ctx, cancel, c)

	// Two nodes, labelled by disk, as in seed section 三.2.
	createNode(t, c, st.MakeNode("node01").Allocatable("2", "4Gi").Label("disk", "hdd").Obj())
	createNode(t, c, st.MakeNode("node02").Allocatable("2", "4Gi").Label("disk", "ssd").Obj())
	createPod(t, c, st.MakePod("web-1").Req("500m", "").NodeSelector("disk", "hdd").Obj())
	createPod(t, c, st.MakePod("web-2").Req("500m", "").NodeSelector("disk", "hdd").Obj())
	createPod(t, c, st.MakePod("fast").Req("1", "").NodeSelector("disk", "ssd").Obj())
	createPod(t, c, st.MakePod("big").Req("3", "").Obj())
	createPod(t, c, st.MakePod("other").Req("", "").SchedulerName("other-scheduler").Obj())

	t.Run("pods are bound to the nodes that fit them", func(t *testing.T) {
		waitBound(t, c, "web-1", "node01")
		waitBound(t, c, "web-2", "node01")
		waitBound(t, c, "fast", "node02")
		waitEvent(t, c, "web-1", "Scheduled", "Successfully assigned default/web-1 to node01")
		for _, want := range []string{`msg="scheduling pod" step=9 pod=default/web-1`, `msg="bound pod to node" step=10 pod=default/web-1 node=node01`,
			`msg="scheduling explanation" step=9 pod=default/web-1 why="node01: the only feasible node: not scored; rejected 1: NodeAffinity \"node(s) didn't match Pod's node affinity/selector\" ×1"`} {
			testserver.EventuallyWithin(t, schedulingWait, "log line "+want, func() (bool, string) {
				return strings.Contains(logs.String(), want), "not logged yet"
			})
		}
	})

	t.Run("a pod too big for every node stays Pending with FailedScheduling and PodScheduled=False", func(t *testing.T) {
		// Every pod has priority 0: there is nothing preemption could evict.
		const msg = "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.."
		waitEvent(t, c, "big", "FailedScheduling", msg)
		testserver.EventuallyWithin(t, schedulingWait, "PodScheduled=False on big", func() (bool, string) {
			cond := podcondition.Get(getPod(t, c, "big"), corev1.PodScheduled)
			return cond != nil && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable && cond.Message == msg,
				fmt.Sprintf("PodScheduled %+v", cond)
		})
		if pod := getPod(t, c, "big"); pod.Spec.NodeName != "" || pod.Status.Phase != corev1.PodPending {
			t.Fatalf("big: node %q, phase %s", pod.Spec.NodeName, pod.Status.Phase)
		}
	})

	t.Run("the pending pod is scheduled as soon as a big enough node is added", func(t *testing.T) {
		createNode(t, c, st.MakeNode("node03").Allocatable("4", "8Gi").Label("disk", "ssd").Obj())
		waitBound(t, c, "big", "node03")
	})

	t.Run("a pod waiting for room is scheduled when a pod on that node finishes", func(t *testing.T) {
		// node02 has 1 cpu free (fast), node03 1 cpu (big), node01 is hdd.
		createPod(t, c, st.MakePod("mid").Req("1500m", "").NodeSelector("disk", "ssd").Obj())
		waitEvent(t, c, "mid", "FailedScheduling",
			"0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 Insufficient cpu. "+
				"preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..")
		patch := []byte(`{"status":{"phase":"Succeeded"}}`)
		if err := c.Patch(context.Background(), client.Pods, "default", "fast", types.MergePatchType, patch, nil, "status"); err != nil {
			t.Fatal(err)
		}
		waitBound(t, c, "mid", "node02")
	})

	t.Run("a pod for another scheduler is left alone", func(t *testing.T) {
		if pod := getPod(t, c, "other"); pod.Spec.NodeName != "" {
			t.Errorf("other was bound to %s", pod.Spec.NodeName)
		}
	})
}

func createNode(t *testing.T, c *client.Client, node *corev1.Node) {
	t.Helper()
	if err := c.Create(context.Background(), client.Nodes, "", node, nil); err != nil {
		t.Fatal(err)
	}
}

func createPod(t *testing.T, c *client.Client, pod *corev1.Pod) {
	t.Helper()
	pod.UID = "" // the API server assigns it
	if err := c.Create(context.Background(), client.Pods, pod.Namespace, pod, nil); err != nil {
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

func waitBound(t *testing.T, c *client.Client, pod, node string) {
	t.Helper()
	testserver.EventuallyWithin(t, schedulingWait, fmt.Sprintf("%s bound to %s", pod, node), func() (bool, string) {
		got := getPod(t, c, pod).Spec.NodeName
		if got != "" && got != node {
			t.Fatalf("%s bound to %s, want %s", pod, got, node)
		}
		return got == node, "not bound yet"
	})
}

func waitEvent(t *testing.T, c *client.Client, pod, reason, message string) {
	t.Helper()
	testserver.EventuallyWithin(t, schedulingWait, fmt.Sprintf("%s event %q on %s", reason, message, pod), func() (bool, string) {
		var list corev1.EventList
		err := c.List(context.Background(), client.Events, "default",
			client.ListOptions{FieldSelector: "involvedObject.name=" + pod + ",reason=" + reason}, &list)
		if err != nil {
			t.Fatalf("list events: %v", err)
		}
		var seen []string
		for _, ev := range list.Items {
			if ev.Message == message && ev.Source.Component == corev1.DefaultSchedulerName && ev.InvolvedObject.Kind == "Pod" {
				return true, ""
			}
			seen = append(seen, ev.Message)
		}
		return false, fmt.Sprintf("%s events %q", reason, seen)
	})
}

// schedulingWait bounds the waits of these tests. It is longer than
// testserver.EventuallyTimeout because a pod that failed waits out its
// backoff (up to queue.DefaultPodMaxBackoff, 10s) before it is tried again.
const schedulingWait = 30 * time.Second

// runScheduler runs a scheduler on c until the test ends (cancel stops
// it) and returns its debug log, printed if the test fails.
func runScheduler(t *testing.T, ctx context.Context, cancel context.CancelFunc, c *client.Client) *testserver.LogBuffer {
	t.Helper()
	return runSchedulerWith(t, ctx, cancel, Config{Client: c})
}

// runSchedulerWith is runScheduler with a Config of the test's (its Log is
// replaced by the returned buffer).
func runSchedulerWith(t *testing.T, ctx context.Context, cancel context.CancelFunc, cfg Config) *testserver.LogBuffer {
	t.Helper()
	logs := &testserver.LogBuffer{}
	cfg.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if t.Failed() || testing.Verbose() {
			t.Log("scheduler log:\n" + logs.String())
		}
	})
	return logs
}
