package scheduler

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/podcondition"
	"github.com/mkube/mkube/internal/testserver"
	"github.com/mkube/mkube/scheduler/config"
	"github.com/mkube/mkube/scheduler/explanation"
	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// priorityClasses is scheduling.k8s.io/v1 PriorityClasses, which only
// this test writes.
var priorityClasses = client.Resource{GroupVersion: schedulingv1.SchemeGroupVersion, Name: "priorityclasses", Kind: "PriorityClass",
	New: func() runtime.Object { return &schedulingv1.PriorityClass{} }, NewList: func() runtime.Object { return &schedulingv1.PriorityClassList{} }}

// TestPreemptionAgainstAPIServer follows seed 003's "Pod 优先级和抢占式调度"
// through a real API server: a pod of a higher PriorityClass evicts a
// lower-priority pod from a full node, is nominated there, and is bound
// once the victim is gone (the test plays the kubelet); pods that may not
// preempt stay Pending and say why.
func TestPreemptionAgainstAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := client.New(testserver.Start(t), "scheduler-test")
	logs := runScheduler(t, ctx, cancel, c)

	createNode(t, c, st.MakeNode("node01").Allocatable("1", "4Gi").Obj())
	createPod(t, c, st.MakePod("low").Req("800m", "").Obj()) // no class: priority 0
	waitBound(t, c, "low", "node01")
	running := []byte(`{"status":{"phase":"Running","startTime":"2025-01-01T09:00:00Z"}}`) // as the kubelet reports it
	if err := c.Patch(ctx, client.Pods, "default", "low", types.MergePatchType, running, nil, "status"); err != nil {
		t.Fatal(err)
	}
	createPriorityClass(t, c, "high", 1000, corev1.PreemptLowerPriority)
	createPod(t, c, st.MakePod("high").Req("800m", "").PriorityClassName("high").Obj())
	high := getPod(t, c, "high")
	if high.Spec.Priority == nil || *high.Spec.Priority != 1000 {
		t.Fatalf("high's priority = %v, want 1000 from its class", high.Spec.Priority)
	}

	t.Run("the higher-priority pod preempts the lower one: the victim is deleted gracefully with a Preempted event", func(t *testing.T) {
		testserver.EventuallyWithin(t, schedulingWait, "low's deletionTimestamp", func() (bool, string) {
			low := getPod(t, c, "low")
			cond := podcondition.Get(low, corev1.DisruptionTarget)
			return low.DeletionTimestamp != nil && cond != nil && cond.Status == corev1.ConditionTrue && cond.Reason == corev1.PodReasonPreemptionByScheduler,
				fmt.Sprintf("deletionTimestamp %v, DisruptionTarget %+v", low.DeletionTimestamp, cond)
		})
		waitEvent(t, c, "low", "Preempted", "Preempted by pod "+string(high.UID)+" on node node01")
	})

	t.Run("the preemptor is nominated to the node and waits, Pending, for its victim", func(t *testing.T) {
		testserver.EventuallyWithin(t, schedulingWait, "high's nominatedNodeName", nominatedTo(t, c, "high", "node01"))
		waitEvent(t, c, "high", "FailedScheduling", "0/1 nodes are available: 1 Insufficient cpu.")
		if pod := getPod(t, c, "high"); pod.Spec.NodeName != "" {
			t.Fatalf("high was bound to %s while its victim still runs", pod.Spec.NodeName)
		}
		var b bytes.Buffer
		if err := explanation.WritePod(&b, getPod(t, c, "high")); err != nil || !strings.Contains(b.String(), "It is nominated to node01") {
			t.Errorf("explain pod high:\n%s(err %v)", b.String(), err)
		}
	})

	t.Run("once the kubelet has deleted the victim, the preemptor is bound there and its nomination cleared", func(t *testing.T) {
		deletePodNow(t, c, "low")
		waitBound(t, c, "high", "node01")
		testserver.EventuallyWithin(t, schedulingWait, "high's nominatedNodeName cleared", nominatedTo(t, c, "high", ""))
		var b bytes.Buffer
		if err := explanation.WritePod(&b, getPod(t, c, "high")); err != nil {
			t.Fatal(err)
		}
		if want := "To make room it had preempted 1 pod(s) on node01: default/low (priority 0)."; !strings.Contains(b.String(), want) {
			t.Errorf("explain pod high:\n%s\nwant a line %q", b.String(), want)
		}
		if want := `msg="preempting pods" step=9 pod=default/high priority=1000 node=node01 victims="default/low (priority 0)" pdbViolations=0`; !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %s", want)
		}
	})

	t.Run("a pod of equal priority cannot preempt: it stays Pending and says no victims were found", func(t *testing.T) {
		createPod(t, c, st.MakePod("peer").Req("800m", "").PriorityClassName("high").Obj())
		const msg = "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.."
		waitEvent(t, c, "peer", "FailedScheduling", msg)
		testserver.EventuallyWithin(t, schedulingWait, "peer's PodScheduled=False", func() (bool, string) {
			got := podScheduledMessage(getPod(t, c, "peer"))
			return got == msg, fmt.Sprintf("message %q", got)
		})
	})

	t.Run("a pod whose class says preemptionPolicy Never waits for room instead of preempting", func(t *testing.T) {
		createPriorityClass(t, c, "polite", 2000, corev1.PreemptNever)
		createPod(t, c, st.MakePod("polite").Req("800m", "").PriorityClassName("polite").Obj())
		waitEvent(t, c, "polite", "FailedScheduling",
			"0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never..")
		if pod := getPod(t, c, "high"); pod.DeletionTimestamp != nil {
			t.Error("high was preempted by a pod with preemptionPolicy Never")
		}
	})
}

// With DefaultPreemption disabled in the profile, a pod of higher priority
// that fits nowhere waits like any other: nobody is evicted and the
// FailedScheduling message has no preemption part.
func TestPreemptionDisabledByTheProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := client.New(testserver.Start(t), "scheduler-test")
	profile, err := config.Parse([]byte(`profiles: [{plugins: {postFilter: {disabled: [{name: DefaultPreemption}]}}}]`))
	if err != nil {
		t.Fatal(err)
	}
	runSchedulerWith(t, ctx, cancel, Config{Client: c, Profile: profile.Profile()})

	createNode(t, c, st.MakeNode("node01").Allocatable("1", "4Gi").Obj())
	createPod(t, c, st.MakePod("low").Req("800m", "").Obj())
	waitBound(t, c, "low", "node01")
	createPriorityClass(t, c, "high", 1000, corev1.PreemptLowerPriority)
	createPod(t, c, st.MakePod("high").Req("800m", "").PriorityClassName("high").Obj())
	waitEvent(t, c, "high", "FailedScheduling", "0/1 nodes are available: 1 Insufficient cpu.")
	// The event and the status patch are two writes: wait for the second.
	testserver.EventuallyWithin(t, schedulingWait, "high's PodScheduled message without a preemption part", func() (bool, string) {
		got := podScheduledMessage(getPod(t, c, "high"))
		return got == "0/1 nodes are available: 1 Insufficient cpu.", fmt.Sprintf("message %q", got)
	})
	if low := getPod(t, c, "low"); low.DeletionTimestamp != nil {
		t.Error("low was preempted although the profile disables DefaultPreemption")
	}
	if high := getPod(t, c, "high"); high.Status.NominatedNodeName != "" {
		t.Errorf("high was nominated to %q", high.Status.NominatedNodeName)
	}
}

func createPriorityClass(t *testing.T, c *client.Client, name string, value int32, policy corev1.PreemptionPolicy) {
	t.Helper()
	pc := &schedulingv1.PriorityClass{TypeMeta: metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
		ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, PreemptionPolicy: &policy}
	if err := c.Create(context.Background(), priorityClasses, "", pc, nil); err != nil {
		t.Fatal(err)
	}
}

// deletePodNow is what the kubelet does once the containers of a pod being
// deleted have stopped: DELETE with gracePeriodSeconds=0.
func deletePodNow(t *testing.T, c *client.Client, name string) {
	t.Helper()
	zero := int64(0)
	if err := c.Delete(context.Background(), client.Pods, "default", name, &metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
}

// nominatedTo is a condition for testserver.Eventually: the pod's
// status.nominatedNodeName is node.
func nominatedTo(t *testing.T, c *client.Client, pod, node string) func() (bool, string) {
	return func() (bool, string) {
		got := getPod(t, c, pod).Status.NominatedNodeName
		return got == node, fmt.Sprintf("nominatedNodeName %q", got)
	}
}

// podScheduledMessage is the message of the pod's PodScheduled=False
// condition, "" if it has none.
func podScheduledMessage(pod *corev1.Pod) string {
	if cond := podcondition.Get(pod, corev1.PodScheduled); cond != nil && cond.Status == corev1.ConditionFalse {
		return cond.Message
	}
	return ""
}

func TestNominatedPodsKeepTheirRoom(t *testing.T) {
	// node01 has 1 cpu free; high (priority 1000) is nominated there for 1 cpu.
	nodes := []*framework.NodeInfo{
		st.NodeInfo(st.MakeNode("node01").Allocatable("2", "8Gi").Obj(), st.MakePod("running").Req("1", "").NodeName("node01").Obj()),
	}
	nominee := st.MakePod("high").Priority(1000).Req("1", "").NominatedNodeName("node01").Obj()
	tests := []struct {
		name     string
		pod      *corev1.Pod
		wantNode string
		wantErr  string
	}{
		{"a pod of lower priority does not take the room a nominated pod waits for",
			st.MakePod("low").Priority(0).Req("1", "").Obj(), "",
			"0/1 nodes are available: 1 Insufficient cpu."},
		{"a pod of equal priority does not either",
			st.MakePod("peer").Priority(1000).Req("1", "").Obj(), "",
			"0/1 nodes are available: 1 Insufficient cpu."},
		{"a pod of higher priority does not see the nomination",
			st.MakePod("vip").Priority(2000).Req("1", "").Obj(), "node01", ""},
		{"the nominated pod itself fits where it is nominated",
			nominee, "node01", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestScheduler(t, nodes...)
			s.queue.Add(nominee)
			r, err := s.schedulePod(framework.NewCycleState(), framework.NewPodInfo(tt.pod))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || r.SuggestedHost != tt.wantNode {
				t.Fatalf("node %q, err %v; want %s", r.SuggestedHost, err, tt.wantNode)
			}
		})
	}
}
