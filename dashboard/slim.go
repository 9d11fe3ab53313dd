package dashboard

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/scheduler/explanation"
)

// slim is the informers' transform (client.Informer.SetTransform): of
// each pod, node and Event, the dashboard keeps only the fields its views
// read (summary.go, steps.go, explain.go, faults.go, sightings.go), so
// that 150,000 pods and their Events cost it tens of megabytes, not
// gigabytes: a pod's spec (its containers' images, commands, env,
// volumes), a node's images and capacity and most annotations are never
// drawn. Other kinds are kept whole; they are few.
func slim(obj runtime.Object) runtime.Object {
	switch o := obj.(type) {
	case *corev1.Pod:
		return slimPod(o)
	case *corev1.Node:
		return slimNode(o)
	case *corev1.Event:
		return slimEvent(o)
	}
	return obj
}

// slimMeta keeps what identifies an object and when it was created and
// deleted, and who owns it (a pod's ReplicaSet, for its steps).
func slimMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp, OwnerReferences: m.OwnerReferences}
}

func slimPod(p *corev1.Pod) *corev1.Pod {
	s := &corev1.Pod{TypeMeta: p.TypeMeta, ObjectMeta: slimMeta(p.ObjectMeta)}
	if v, ok := p.Annotations[explanation.AnnotationKey]; ok {
		s.Annotations = map[string]string{explanation.AnnotationKey: v} // why this node (explain.go)
	}
	s.Spec.NodeName = p.Spec.NodeName
	for _, c := range p.Spec.Containers {
		s.Spec.Containers = append(s.Spec.Containers, corev1.Container{Name: c.Name}) // a fault's target (faults.go)
	}
	s.Status = corev1.PodStatus{Phase: p.Status.Phase, Conditions: p.Status.Conditions, StartTime: p.Status.StartTime}
	for _, cs := range p.Status.ContainerStatuses {
		s.Status.ContainerStatuses = append(s.Status.ContainerStatuses, corev1.ContainerStatus{Name: cs.Name, State: cs.State,
			Ready: cs.Ready, RestartCount: cs.RestartCount, Started: cs.Started})
	}
	return s
}

func slimNode(n *corev1.Node) *corev1.Node {
	s := &corev1.Node{TypeMeta: n.TypeMeta, ObjectMeta: slimMeta(n.ObjectMeta)}
	s.Spec.Unschedulable = n.Spec.Unschedulable
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			s.Status.Conditions = []corev1.NodeCondition{c}
		}
	}
	return s
}

func slimEvent(e *corev1.Event) *corev1.Event {
	return &corev1.Event{TypeMeta: e.TypeMeta, ObjectMeta: slimMeta(e.ObjectMeta),
		InvolvedObject: corev1.ObjectReference{Kind: e.InvolvedObject.Kind, Namespace: e.InvolvedObject.Namespace,
			Name: e.InvolvedObject.Name, UID: e.InvolvedObject.UID},
		Reason: e.Reason, Message: e.Message, Source: corev1.EventSource{Component: e.Source.Component},
		FirstTimestamp: e.FirstTimestamp, LastTimestamp: e.LastTimestamp, EventTime: e.EventTime, Count: e.Count}
}
