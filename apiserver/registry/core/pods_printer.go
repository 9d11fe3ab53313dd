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
	ready, restarts, total := 0, 0, len(pod.Spec.Containers)
	var lastRestart time.Time
	count := func(c corev1.ContainerStatus) {
		restarts += int(c.RestartCount)
		if t := c.LastTerminationState.Terminated; t != nil && t.FinishedAt.After(lastRestart) {
			lastRestart = t.FinishedAt.Time
		}
	}
	sidecars := sidecarNames(pod)
	for _, c := range pod.Status.InitContainerStatuses {
		count(c)
		if sidecars[c.Name] && c.Ready {
			ready++ // a sidecar counts among the pod's containers
		}
	}
	total += len(sidecars)
	for _, c := range pod.Status.ContainerStatuses {
		count(c)
		if c.Ready {
			ready++
		}
	}
	restartCell := fmt.Sprint(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		restartCell = fmt.Sprintf("%d (%s ago)", restarts, apiserver.Age(metav1.NewTime(lastRestart), now))
	}
	gates := "<none>"
	if n := len(pod.Spec.ReadinessGates); n > 0 {
		gates = fmt.Sprintf("0/%d", n)
	}
	return []any{fmt.Sprintf("%d/%d", ready, total), podStatusReason(pod), restartCell,
		apiserver.Age(pod.CreationTimestamp, now), apiserver.OrNone(pod.Status.PodIP), apiserver.OrNone(pod.Spec.NodeName),
		apiserver.OrNone(pod.Status.NominatedNodeName), gates}
}

// sidecarNames are the pod's init containers with restartPolicy Always.
func sidecarNames(pod *corev1.Pod) map[string]bool {
	out := map[string]bool{}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			out[c.Name] = true
		}
	}
	return out
}

// podStatusReason is the STATUS column, as kubectl's printPod computes
// it: the phase, unless an init container is not done (Init:1/2,
// Init:Error, Init:CrashLoopBackOff), a container has a more telling
// reason (ContainerCreating, CrashLoopBackOff, Completed, ExitCode:1...),
// or the pod is being deleted and not finished (Terminating).
func podStatusReason(pod *corev1.Pod) string {
	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	sidecars := sidecarNames(pod)
	initializing := false
	for i, c := range pod.Status.InitContainerStatuses {
		switch {
		case c.State.Terminated != nil && c.State.Terminated.ExitCode == 0:
			continue
		case sidecars[c.Name] && c.Started != nil && *c.Started:
			continue
		case c.State.Terminated != nil && c.State.Terminated.Reason != "":
			reason = "Init:" + c.State.Terminated.Reason
		case c.State.Terminated != nil && c.State.Terminated.Signal != 0:
			reason = fmt.Sprintf("Init:Signal:%d", c.State.Terminated.Signal)
		case c.State.Terminated != nil:
			reason = fmt.Sprintf("Init:ExitCode:%d", c.State.Terminated.ExitCode)
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + c.State.Waiting.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		initializing = true
		break
	}
	if !initializing || podcondition.IsInitialized(pod) {
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
	}
	switch {
	case pod.DeletionTimestamp != nil && pod.Status.Reason == "NodeLost":
		return string(corev1.PodUnknown)
	case pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed:
		return "Terminating"
	}
	return reason
}
