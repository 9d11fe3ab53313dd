package core

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/internal/podcondition"
)

// The columns and cells of `kubectl get pods`, after kube-apiserver's
// printers (pkg/printers/internalversion/printers.go): same headers, same
// wording of states, so a learner sees here what a real cluster prints.

var podColumns = []apiserver.Column{
	{Name: "Ready", Type: "string"}, {Name: "Status", Type: "string"}, {Name: "Restarts", Type: "string"},
	{Name: "Age", Type: "string"}, {Name: "IP", Type: "string", Priority: 1}, {Name: "Node", Type: "string", Priority: 1},
	{Name: "Nominated Node", Type: "string", Priority: 1}, {Name: "Readiness Gates", Type: "string", Priority: 1},
}

func podRow(obj runtime.Object, now time.Time) []any {
	pod := obj.(*corev1.Pod)
	ready, restarts := 0, 0
	var lastRestart time.Time
	for _, c := range pod.Status.ContainerStatuses {
		if c.Ready {
			ready++
		}
		restarts += int(c.RestartCount)
		if t := c.LastTerminationState.Terminated; t != nil && t.FinishedAt.After(lastRestart) {
			lastRestart = t.FinishedAt.Time
		}
	}
	restartCell := fmt.Sprint(restarts)
	if !lastRestart.IsZero() {
		restartCell = fmt.Sprintf("%d (%s ago)", restarts, apiserver.Age(metav1.NewTime(lastRestart), now))
	}
	gates := "<none>"
	if n := len(pod.Spec.ReadinessGates); n > 0 {
		gates = fmt.Sprintf("0/%d", n)
	}
	return []any{fmt.Sprintf("%d/%d", ready, len(pod.Spec.Containers)), podStatusReason(pod), restartCell,
		apiserver.Age(pod.CreationTimestamp, now), apiserver.OrNone(pod.Status.PodIP), apiserver.OrNone(pod.Spec.NodeName),
		apiserver.OrNone(pod.Status.NominatedNodeName), gates}
}

// podStatusReason is the STATUS column: the phase, unless a container has
// a more telling reason (ContainerCreating, CrashLoopBackOff, Completed,
// ExitCode:1...), or the pod is being deleted (Terminating).
func podStatusReason(pod *corev1.Pod) string {
	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for i, c := range pod.Status.InitContainerStatuses {
		switch {
		case c.State.Terminated != nil && c.State.Terminated.ExitCode == 0:
			continue
		case c.State.Terminated != nil && c.State.Terminated.Reason != "":
			reason = "Init:" + c.State.Terminated.Reason
		case c.State.Terminated != nil:
			reason = fmt.Sprintf("Init:ExitCode:%d", c.State.Terminated.ExitCode)
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + c.State.Waiting.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		return reason
	}
	running := false
	for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
		c := pod.Status.ContainerStatuses[i]
		switch {
		case c.State.Waiting != nil && c.State.Waiting.Reason != "":
			reason = c.State.Waiting.Reason
		case c.State.Terminated != nil && c.State.Terminated.Reason != "":
			reason = c.State.Terminated.Reason
		case c.State.Terminated != nil && c.State.Terminated.Signal != 0:
			reason = fmt.Sprintf("Signal:%d", c.State.Terminated.Signal)
		case c.State.Terminated != nil:
			reason = fmt.Sprintf("ExitCode:%d", c.State.Terminated.ExitCode)
		case c.Ready && c.State.Running != nil:
			running = true
		}
	}
	if reason == "Completed" && running {
		reason = "Running"
		if !podcondition.IsReady(pod) {
			reason = "NotReady"
		}
	}
	if pod.DeletionTimestamp != nil {
		if pod.Status.Reason == "NodeLost" {
			return string(corev1.PodUnknown)
		}
		return "Terminating"
	}
	return reason
}
