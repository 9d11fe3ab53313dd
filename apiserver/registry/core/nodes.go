package core

import (
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// Nodes are the machines pods run on: each kubelet registers its own and
// reports its capacity and conditions through nodes/status; the scheduler
// reads them (seed 000 §二).
var Nodes = &apiserver.Resource{
	GroupVersion: v1, Name: "nodes", Kind: "Node",
	ShortNames: []string{"no"}, Columns: nodeColumns, Row: nodeRow,
	Subresources: []apiserver.Subresource{apiserver.StatusSubresource, nodeProxySubresource},
	New:          func() runtime.Object { return &corev1.Node{} },
	NewList:      func() runtime.Object { return &corev1.NodeList{} },
	Default: func(obj runtime.Object) {
		// Kubernetes' defaulting: a node that reports no allocatable
		// offers its whole capacity.
		node := obj.(*corev1.Node)
		if len(node.Status.Allocatable) == 0 && len(node.Status.Capacity) > 0 {
			node.Status.Allocatable = node.Status.Capacity.DeepCopy()
		}
	},
	Validate: func(obj, _ runtime.Object) field.ErrorList {
		node := obj.(*corev1.Node)
		return validateTaints(node.Spec.Taints, field.NewPath("spec", "taints"))
	},
	Fields: func(obj runtime.Object) fields.Set {
		return fields.Set{"spec.unschedulable": strconv.FormatBool(obj.(*corev1.Node).Spec.Unschedulable)}
	},
}

var nodeColumns = []apiserver.Column{
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
	return []any{status, apiserver.OrNone(strings.Join(roles, ",")), apiserver.Age(node.CreationTimestamp, now), info.KubeletVersion,
		addr(corev1.NodeInternalIP), addr(corev1.NodeExternalIP), orUnknown(info.OSImage), orUnknown(info.KernelVersion),
		orUnknown(info.ContainerRuntimeVersion)}
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}
