package apiserver

import (
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/internal/podcondition"
)

// The columns and cells of `kubectl get`, after kube-apiserver's printers
// (pkg/printers/internalversion/printers.go): same headers, same wording of
// states, so a learner sees here what a real cluster would print.

var podColumns = []Column{
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
		restartCell = fmt.Sprintf("%d (%s ago)", restarts, age(metav1.NewTime(lastRestart), now))
	}
	gates := "<none>"
	if n := len(pod.Spec.ReadinessGates); n > 0 {
		gates = fmt.Sprintf("0/%d", n)
	}
	return []any{fmt.Sprintf("%d/%d", ready, len(pod.Spec.Containers)), podStatusReason(pod), restartCell,
		age(pod.CreationTimestamp, now), orNone(pod.Status.PodIP), orNone(pod.Spec.NodeName),
		orNone(pod.Status.NominatedNodeName), gates}
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

var nodeColumns = []Column{
	{Name: "Status", Type: "string"}, {Name: "Roles", Type: "string"}, {Name: "Age", Type: "string"},
	{Name: "Version", Type: "string"}, {Name: "Internal-IP", Type: "string", Priority: 1},
	{Name: "External-IP", Type: "string", Priority: 1}, {Name: "OS-Image", Type: "string", Priority: 1},
	{Name: "Kernel-Version", Type: "string", Priority: 1}, {Name: "Container-Runtime", Type: "string", Priority: 1},
}

func nodeRow(obj runtime.Object, now time.Time) []any {
	node := obj.(*corev1.Node)
	// As kubectl: Ready if the condition is True, NotReady if it is False
	// or Unknown (a silent kubelet), Unknown if the node never reported.
	status := "Unknown"
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			status = "NotReady"
			if c.Status == corev1.ConditionTrue {
				status = "Ready"
			}
		}
	}
	if node.Spec.Unschedulable {
		status += ",SchedulingDisabled"
	}
	var roles []string
	for k, v := range node.Labels {
		switch {
		case strings.HasPrefix(k, "node-role.kubernetes.io/"):
			if r := strings.TrimPrefix(k, "node-role.kubernetes.io/"); r != "" {
				roles = append(roles, r)
			}
		case k == "kubernetes.io/role" && v != "":
			roles = append(roles, v)
		}
	}
	sort.Strings(roles)
	addr := func(t corev1.NodeAddressType) string {
		for _, a := range node.Status.Addresses {
			if a.Type == t {
				return a.Address
			}
		}
		return "<none>"
	}
	info := node.Status.NodeInfo
	return []any{status, orNone(strings.Join(roles, ",")), age(node.CreationTimestamp, now), info.KubeletVersion,
		addr(corev1.NodeInternalIP), addr(corev1.NodeExternalIP), orUnknown(info.OSImage), orUnknown(info.KernelVersion),
		orUnknown(info.ContainerRuntimeVersion)}
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

var namespaceColumns = []Column{{Name: "Status", Type: "string"}, {Name: "Age", Type: "string"}}

func namespaceRow(obj runtime.Object, now time.Time) []any {
	ns := obj.(*corev1.Namespace)
	return []any{string(ns.Status.Phase), age(ns.CreationTimestamp, now)}
}

// eventColumns: Kubernetes prints events with the name last, wide only.
var eventColumns = []Column{
	{Name: "Last Seen", Type: "string"}, {Name: "Type", Type: "string"}, {Name: "Reason", Type: "string"},
	{Name: "Object", Type: "string"}, {Name: "Subobject", Type: "string", Priority: 1},
	{Name: "Source", Type: "string", Priority: 1}, {Name: "Message", Type: "string"},
	{Name: "First Seen", Type: "string", Priority: 1}, {Name: "Count", Type: "string", Priority: 1},
}

func eventRow(obj runtime.Object, now time.Time) []any {
	ev := obj.(*corev1.Event)
	last := ev.LastTimestamp
	if last.IsZero() {
		last = metav1.NewTime(ev.EventTime.Time)
	}
	first := ev.FirstTimestamp
	if first.IsZero() {
		first = last
	}
	source := ev.Source.Component
	if ev.Source.Host != "" {
		source += ", " + ev.Source.Host
	}
	return []any{age(last, now), ev.Type, ev.Reason,
		strings.ToLower(ev.InvolvedObject.Kind) + "/" + ev.InvolvedObject.Name, ev.InvolvedObject.FieldPath,
		source, strings.TrimSpace(ev.Message), age(first, now), fmt.Sprint(max(ev.Count, 1))}
}

var workloadWideColumns = []Column{
	{Name: "Containers", Type: "string", Priority: 1}, {Name: "Images", Type: "string", Priority: 1},
	{Name: "Selector", Type: "string", Priority: 1},
}

func containersAndImages(spec *corev1.PodSpec) (string, string) {
	var names, images []string
	for _, c := range spec.Containers {
		names = append(names, c.Name)
		images = append(images, c.Image)
	}
	return strings.Join(names, ","), strings.Join(images, ",")
}

func selectorString(sel *metav1.LabelSelector) string {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return "<error>"
	}
	return orNone(s.String())
}

var replicaSetColumns = append([]Column{
	{Name: "Desired", Type: "integer"}, {Name: "Current", Type: "integer"}, {Name: "Ready", Type: "integer"},
	{Name: "Age", Type: "string"},
}, workloadWideColumns...)

func replicaSetRow(obj runtime.Object, now time.Time) []any {
	rs := obj.(*appsv1.ReplicaSet)
	names, images := containersAndImages(&rs.Spec.Template.Spec)
	return []any{int64(*rs.Spec.Replicas), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas),
		age(rs.CreationTimestamp, now), names, images, selectorString(rs.Spec.Selector)}
}

var deploymentColumns = append([]Column{
	{Name: "Ready", Type: "string"}, {Name: "Up-to-date", Type: "integer"}, {Name: "Available", Type: "integer"},
	{Name: "Age", Type: "string"},
}, workloadWideColumns...)

func deploymentRow(obj runtime.Object, now time.Time) []any {
	d := obj.(*appsv1.Deployment)
	names, images := containersAndImages(&d.Spec.Template.Spec)
	return []any{fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, *d.Spec.Replicas), int64(d.Status.UpdatedReplicas),
		int64(d.Status.AvailableReplicas), age(d.CreationTimestamp, now), names, images, selectorString(d.Spec.Selector)}
}

var leaseColumns = []Column{{Name: "Holder", Type: "string"}, {Name: "Age", Type: "string"}}

func leaseRow(obj runtime.Object, now time.Time) []any {
	l := obj.(*coordinationv1.Lease)
	holder := ""
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	return []any{holder, age(l.CreationTimestamp, now)}
}
