// Package schedtest builds the nodes and pods the scheduler's tests talk
// about, in a line each:
//
//	schedtest.MakeNode("node01").Allocatable("4", "8Gi").Taint("key1", "value1", corev1.TaintEffectNoSchedule).Obj()
//	schedtest.MakePod("web-1").Req("500m", "256Mi").Obj()
//
// Like kube-scheduler's pkg/scheduler/testing wrappers, it keeps test
// tables short enough to read as a specification.
package schedtest

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/scheduler/framework"
)

// NodeWrapper builds a Node.
type NodeWrapper struct{ corev1.Node }

// MakeNode starts a Ready node with room for 110 pods and nothing else.
func MakeNode(name string) *NodeWrapper {
	n := &NodeWrapper{corev1.Node{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}}
	return n
}

// Allocatable sets allocatable (and capacity) cpu and memory.
func (n *NodeWrapper) Allocatable(cpu, memory string) *NodeWrapper {
	n.Status.Allocatable[corev1.ResourceCPU] = resource.MustParse(cpu)
	n.Status.Allocatable[corev1.ResourceMemory] = resource.MustParse(memory)
	n.Status.Capacity = n.Status.Allocatable.DeepCopy()
	return n
}

// AllocatableResource sets one allocatable resource.
func (n *NodeWrapper) AllocatableResource(name corev1.ResourceName, q string) *NodeWrapper {
	n.Status.Allocatable[name] = resource.MustParse(q)
	return n
}

// Label adds a label.
func (n *NodeWrapper) Label(k, v string) *NodeWrapper {
	n.Labels[k] = v
	return n
}

// Taint adds a taint.
func (n *NodeWrapper) Taint(key, value string, effect corev1.TaintEffect) *NodeWrapper {
	n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	return n
}

// Unschedulable cordons the node.
func (n *NodeWrapper) Unschedulable() *NodeWrapper {
	n.Spec.Unschedulable = true
	return n
}

// Obj returns the node.
func (n *NodeWrapper) Obj() *corev1.Node { return &n.Node }

// PodWrapper builds a Pod.
type PodWrapper struct{ corev1.Pod }

// MakePod starts a pod in "default" with no containers yet.
func MakePod(name string) *PodWrapper {
	return &PodWrapper{corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, UID: types.UID("uid-" + name)},
		Spec:       corev1.PodSpec{SchedulerName: corev1.DefaultSchedulerName},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}}
}

// Namespace sets the namespace.
func (p *PodWrapper) Namespace(ns string) *PodWrapper {
	p.Pod.Namespace = ns
	return p
}

// Container adds a container requesting cpu and memory ("" = not requested).
func (p *PodWrapper) Container(cpu, memory string) *PodWrapper {
	p.Spec.Containers = append(p.Spec.Containers, container(cpu, memory))
	return p
}

// Req is Container: a pod whose one container requests cpu and memory.
func (p *PodWrapper) Req(cpu, memory string) *PodWrapper { return p.Container(cpu, memory) }

// InitContainer adds an init container.
func (p *PodWrapper) InitContainer(cpu, memory string) *PodWrapper {
	p.Spec.InitContainers = append(p.Spec.InitContainers, container(cpu, memory))
	return p
}

// Sidecar adds an init container with restartPolicy Always.
func (p *PodWrapper) Sidecar(cpu, memory string) *PodWrapper {
	c := container(cpu, memory)
	always := corev1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	return p
}

// ExtendedReq adds a container requesting q of an extended resource.
func (p *PodWrapper) ExtendedReq(name corev1.ResourceName, q string) *PodWrapper {
	c := corev1.Container{Name: "c" + string(rune('0'+len(p.Spec.Containers))), Image: "busybox",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{name: resource.MustParse(q)}}}
	p.Spec.Containers = append(p.Spec.Containers, c)
	return p
}

// Overhead sets spec.overhead cpu.
func (p *PodWrapper) Overhead(cpu string) *PodWrapper {
	p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	return p
}

// Priority sets spec.priority.
func (p *PodWrapper) Priority(n int32) *PodWrapper {
	p.Spec.Priority = &n
	return p
}

// NodeSelector adds a nodeSelector entry.
func (p *PodWrapper) NodeSelector(k, v string) *PodWrapper {
	if p.Spec.NodeSelector == nil {
		p.Spec.NodeSelector = map[string]string{}
	}
	p.Spec.NodeSelector[k] = v
	return p
}

// Toleration adds a toleration.
func (p *PodWrapper) Toleration(key string, op corev1.TolerationOperator, value string, effect corev1.TaintEffect) *PodWrapper {
	p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: key, Operator: op, Value: value, Effect: effect})
	return p
}

// NodeName sets spec.nodeName.
func (p *PodWrapper) NodeName(n string) *PodWrapper {
	p.Spec.NodeName = n
	return p
}

// SchedulerName sets spec.schedulerName.
func (p *PodWrapper) SchedulerName(n string) *PodWrapper {
	p.Spec.SchedulerName = n
	return p
}

// Obj returns the pod.
func (p *PodWrapper) Obj() *corev1.Pod { return &p.Pod }

func container(cpu, memory string) corev1.Container {
	req := corev1.ResourceList{}
	if cpu != "" {
		req[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		req[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return corev1.Container{Name: "app", Image: "nginx", Resources: corev1.ResourceRequirements{Requests: req}}
}

// NodeInfo builds the NodeInfo of node with pods counted on it.
func NodeInfo(node *corev1.Node, pods ...*corev1.Pod) *framework.NodeInfo {
	ni := framework.NewNodeInfo()
	ni.SetNode(node)
	for _, p := range pods {
		ni.AddPodInfo(framework.NewPodInfo(p))
	}
	return ni
}
