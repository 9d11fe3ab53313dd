// Package schedtest builds the nodes and pods the scheduler's tests talk
// about, in a line each:
//
//	schedtest.MakeNode("node01").Allocatable("4", "8Gi").Taint("key1", "value1", corev1.TaintEffectNoSchedule).Obj()
//	schedtest.MakePod("web-1").Req("500m", "256Mi").Obj()
//
// Like kube-scheduler's pkg/scheduler/testing wrappers, it keeps test
// tables short enough to read as a specification.
//
// It all lives in wrappers.go: NodeWrapper (MakeNode) and PodWrapper
// (MakePod).
package schedtest

import (
	"time"

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

// Zone sets the topology.kubernetes.io/zone label.
func (n *NodeWrapper) Zone(zone string) *NodeWrapper { return n.Label(corev1.LabelTopologyZone, zone) }

// Image adds an image the kubelet reports present, with its names.
func (n *NodeWrapper) Image(sizeBytes int64, names ...string) *NodeWrapper {
	n.Status.Images = append(n.Status.Images, corev1.ContainerImage{Names: names, SizeBytes: sizeBytes})
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

// Label adds a label.
func (p *PodWrapper) Label(k, v string) *PodWrapper {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[k] = v
	return p
}

// OwnedBy sets the pod's controller owner reference, as a ReplicaSet or
// StatefulSet sets it on the pods it creates.
func (p *PodWrapper) OwnedBy(kind, name string) *PodWrapper {
	yes := true
	p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{
		APIVersion: "apps/v1", Kind: kind, Name: name, UID: types.UID("uid-" + name), Controller: &yes})
	return p
}

// Terminating sets a deletionTimestamp.
func (p *PodWrapper) Terminating() *PodWrapper {
	now := metav1.Now()
	p.DeletionTimestamp = &now
	return p
}

// Image adds a container running image, requesting nothing.
func (p *PodWrapper) Image(image string) *PodWrapper {
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "c" + string(rune('0'+len(p.Spec.Containers))), Image: image})
	return p
}

// HostPort adds a container exposing containerPort 8080 on hostPort, with
// protocol and hostIP as given ("" = the defaults TCP and 0.0.0.0).
func (p *PodWrapper) HostPort(hostPort int32, protocol corev1.Protocol, hostIP string) *PodWrapper {
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "c" + string(rune('0'+len(p.Spec.Containers))), Image: "nginx",
		Ports: []corev1.ContainerPort{{ContainerPort: 8080, HostPort: hostPort, Protocol: protocol, HostIP: hostIP}}})
	return p
}

// Volume adds a volume.
func (p *PodWrapper) Volume(v corev1.Volume) *PodWrapper {
	p.Spec.Volumes = append(p.Spec.Volumes, v)
	return p
}

// Expr is a node selector requirement: Expr("myname", corev1.NodeSelectorOpNotIn, "liliang", "scj").
func Expr(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func (p *PodWrapper) nodeAffinity() *corev1.NodeAffinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	if p.Spec.Affinity.NodeAffinity == nil {
		p.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	return p.Spec.Affinity.NodeAffinity
}

// RequiredNodeAffinity adds a nodeSelectorTerm of matchExpressions (ANDed)
// to requiredDuringSchedulingIgnoredDuringExecution; terms are ORed.
func (p *PodWrapper) RequiredNodeAffinity(exprs ...corev1.NodeSelectorRequirement) *PodWrapper {
	return p.RequiredNodeAffinityTerm(corev1.NodeSelectorTerm{MatchExpressions: exprs})
}

// RequiredNodeAffinityTerm adds a whole nodeSelectorTerm (matchFields too).
func (p *PodWrapper) RequiredNodeAffinityTerm(term corev1.NodeSelectorTerm) *PodWrapper {
	na := p.nodeAffinity()
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	r := na.RequiredDuringSchedulingIgnoredDuringExecution
	r.NodeSelectorTerms = append(r.NodeSelectorTerms, term)
	return p
}

// PreferredNodeAffinity adds a preferred term with weight.
func (p *PodWrapper) PreferredNodeAffinity(weight int32, exprs ...corev1.NodeSelectorRequirement) *PodWrapper {
	na := p.nodeAffinity()
	na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution,
		corev1.PreferredSchedulingTerm{Weight: weight, Preference: corev1.NodeSelectorTerm{MatchExpressions: exprs}})
	return p
}

// Selector is a label selector with one expression:
// Selector("app", metav1.LabelSelectorOpIn, "myapp-demo").
func Selector(key string, op metav1.LabelSelectorOperator, values ...string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

// AffinityKind says where PodAffinityTerm puts a term.
type AffinityKind int

const (
	RequiredAffinity AffinityKind = iota
	RequiredAntiAffinity
	PreferredAffinity
	PreferredAntiAffinity
)

// PodAffinity adds a required podAffinity term (seed section 三.3).
func (p *PodWrapper) PodAffinity(topologyKey string, sel *metav1.LabelSelector, namespaces ...string) *PodWrapper {
	return p.PodAffinityTerm(RequiredAffinity, 0, corev1.PodAffinityTerm{TopologyKey: topologyKey, LabelSelector: sel, Namespaces: namespaces})
}

// PodAntiAffinity adds a required podAntiAffinity term.
func (p *PodWrapper) PodAntiAffinity(topologyKey string, sel *metav1.LabelSelector, namespaces ...string) *PodWrapper {
	return p.PodAffinityTerm(RequiredAntiAffinity, 0, corev1.PodAffinityTerm{TopologyKey: topologyKey, LabelSelector: sel, Namespaces: namespaces})
}

// PodAffinityTerm adds term as kind; weight is for the preferred kinds.
func (p *PodWrapper) PodAffinityTerm(kind AffinityKind, weight int32, term corev1.PodAffinityTerm) *PodWrapper {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	a := p.Spec.Affinity
	if a.PodAffinity == nil && (kind == RequiredAffinity || kind == PreferredAffinity) {
		a.PodAffinity = &corev1.PodAffinity{}
	}
	if a.PodAntiAffinity == nil && (kind == RequiredAntiAffinity || kind == PreferredAntiAffinity) {
		a.PodAntiAffinity = &corev1.PodAntiAffinity{}
	}
	weighted := corev1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: term}
	switch kind {
	case RequiredAffinity:
		a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term)
	case RequiredAntiAffinity:
		a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term)
	case PreferredAffinity:
		a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution, weighted)
	case PreferredAntiAffinity:
		a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, weighted)
	}
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

// PriorityClassName names a PriorityClass, from which the API server's
// Priority admission sets spec.priority and spec.preemptionPolicy.
func (p *PodWrapper) PriorityClassName(name string) *PodWrapper {
	p.Spec.PriorityClassName = name
	return p
}

// StartTime sets status.startTime: when the kubelet started the pod.
func (p *PodWrapper) StartTime(t time.Time) *PodWrapper {
	p.Status.StartTime = &metav1.Time{Time: t}
	return p
}

// PreemptNever sets spec.preemptionPolicy Never, as a PriorityClass with
// preemptionPolicy: Never does.
func (p *PodWrapper) PreemptNever() *PodWrapper {
	never := corev1.PreemptNever
	p.Spec.PreemptionPolicy = &never
	return p
}

// NominatedNodeName sets status.nominatedNodeName.
func (p *PodWrapper) NominatedNodeName(n string) *PodWrapper {
	p.Status.NominatedNodeName = n
	return p
}

// PreemptedByScheduler marks the pod as a preemption victim being deleted:
// a deletionTimestamp and the condition DisruptionTarget=True, reason
// PreemptionByScheduler.
func (p *PodWrapper) PreemptedByScheduler() *PodWrapper {
	p.Terminating()
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: corev1.PodReasonPreemptionByScheduler})
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
