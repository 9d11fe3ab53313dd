package apiserver

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DefaultRegistry is every resource mkube serves.
func DefaultRegistry() *Registry {
	return NewRegistry(podsResource, nodesResource, namespacesResource, eventsResource,
		configMapsResource, secretsResource, servicesResource, endpointsResource, serviceAccountsResource,
		replicationControllersResource, replicaSetsResource, deploymentsResource, leasesResource,
		priorityClassesResource, podDisruptionBudgetsResource, selfSubjectAccessReviewsResource, eventsV1Resource)
}

var nodesResource = &Resource{
	GroupVersion: corev1.SchemeGroupVersion, Name: "nodes", Kind: "Node",
	ShortNames: []string{"no"}, Columns: nodeColumns, Row: nodeRow,
	New:     func() runtime.Object { return &corev1.Node{} },
	NewList: func() runtime.Object { return &corev1.NodeList{} },
	Status:  true,
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
		return fields.Set{"spec.unschedulable": boolString(obj.(*corev1.Node).Spec.Unschedulable)}
	},
}

var namespacesResource = &Resource{
	GroupVersion: corev1.SchemeGroupVersion, Name: "namespaces", Kind: "Namespace",
	ShortNames: []string{"ns"}, Columns: namespaceColumns, Row: namespaceRow,
	New:     func() runtime.Object { return &corev1.Namespace{} },
	NewList: func() runtime.Object { return &corev1.NamespaceList{} },
	Status:  true,
	PrepareForCreate: func(obj runtime.Object) {
		ns := obj.(*corev1.Namespace)
		ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
		// The namespace controller's finalizer: deleting the namespace
		// waits until it has deleted everything in it.
		ns.Spec.Finalizers = []corev1.FinalizerName{corev1.FinalizerKubernetes}
	},
	BeginDelete: func(obj runtime.Object) bool {
		ns := obj.(*corev1.Namespace)
		ns.Status.Phase = corev1.NamespaceTerminating
		return len(ns.Spec.Finalizers) > 0
	},
	Default: func(obj runtime.Object) {
		ns := obj.(*corev1.Namespace)
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		// The NamespaceDefaultLabelName feature: every namespace is
		// selectable by its name.
		ns.Labels[corev1.LabelMetadataName] = ns.Name
	},
	Validate: func(obj, _ runtime.Object) field.ErrorList {
		return validateDNSLabelName(obj.(*corev1.Namespace).Name)
	},
	Fields: func(obj runtime.Object) fields.Set {
		return fields.Set{"status.phase": string(obj.(*corev1.Namespace).Status.Phase)}
	},
}

var eventsResource = &Resource{
	GroupVersion: corev1.SchemeGroupVersion, Name: "events", Kind: "Event", Namespaced: true,
	ShortNames: []string{"ev"}, Columns: eventColumns, Row: eventRow,
	New:     func() runtime.Object { return &corev1.Event{} },
	NewList: func() runtime.Object { return &corev1.EventList{} },
	Validate: func(obj, _ runtime.Object) field.ErrorList {
		ev := obj.(*corev1.Event)
		if ev.InvolvedObject.Namespace != "" && ev.InvolvedObject.Namespace != ev.Namespace {
			return field.ErrorList{field.Invalid(field.NewPath("involvedObject", "namespace"), ev.InvolvedObject.Namespace, "does not match event.namespace")}
		}
		return nil
	},
	Fields: func(obj runtime.Object) fields.Set {
		ev := obj.(*corev1.Event)
		return fields.Set{
			"involvedObject.kind":            ev.InvolvedObject.Kind,
			"involvedObject.namespace":       ev.InvolvedObject.Namespace,
			"involvedObject.name":            ev.InvolvedObject.Name,
			"involvedObject.uid":             string(ev.InvolvedObject.UID),
			"involvedObject.apiVersion":      ev.InvolvedObject.APIVersion,
			"involvedObject.resourceVersion": ev.InvolvedObject.ResourceVersion,
			"involvedObject.fieldPath":       ev.InvolvedObject.FieldPath,
			"reason":                         ev.Reason,
			"reportingComponent":             ev.ReportingController,
			"source":                         ev.Source.Component,
			"type":                           ev.Type,
		}
	},
}

var replicaSetsResource = &Resource{
	GroupVersion: appsv1.SchemeGroupVersion, Name: "replicasets", Kind: "ReplicaSet", Namespaced: true,
	ShortNames: []string{"rs"}, Categories: []string{"all"}, Columns: replicaSetColumns, Row: replicaSetRow,
	New:     func() runtime.Object { return &appsv1.ReplicaSet{} },
	NewList: func() runtime.Object { return &appsv1.ReplicaSetList{} },
	Status:  true, Scale: true,
	PrepareForCreate: func(obj runtime.Object) { obj.(*appsv1.ReplicaSet).Status = appsv1.ReplicaSetStatus{} },
	Default: func(obj runtime.Object) {
		rs := obj.(*appsv1.ReplicaSet)
		defaultReplicas(&rs.Spec.Replicas)
		defaultPodSpec(&rs.Spec.Template.Spec)
	},
	Validate: func(obj, old runtime.Object) field.ErrorList {
		rs := obj.(*appsv1.ReplicaSet)
		var oldSel *metav1.LabelSelector
		if old != nil {
			oldSel = old.(*appsv1.ReplicaSet).Spec.Selector
		}
		return validateWorkload(rs.Spec.Replicas, rs.Spec.Selector, oldSel, &rs.Spec.Template)
	},
	Fields: func(obj runtime.Object) fields.Set {
		return fields.Set{"status.replicas": int32String(obj.(*appsv1.ReplicaSet).Status.Replicas)}
	},
}

var deploymentsResource = &Resource{
	GroupVersion: appsv1.SchemeGroupVersion, Name: "deployments", Kind: "Deployment", Namespaced: true,
	ShortNames: []string{"deploy"}, Categories: []string{"all"}, Columns: deploymentColumns, Row: deploymentRow,
	New:     func() runtime.Object { return &appsv1.Deployment{} },
	NewList: func() runtime.Object { return &appsv1.DeploymentList{} },
	Status:  true, Scale: true,
	PrepareForCreate: func(obj runtime.Object) { obj.(*appsv1.Deployment).Status = appsv1.DeploymentStatus{} },
	Default:          func(obj runtime.Object) { defaultDeployment(obj.(*appsv1.Deployment)) },
	Validate: func(obj, old runtime.Object) field.ErrorList {
		d := obj.(*appsv1.Deployment)
		var oldSel *metav1.LabelSelector
		if old != nil {
			oldSel = old.(*appsv1.Deployment).Spec.Selector
		}
		return append(validateWorkload(d.Spec.Replicas, d.Spec.Selector, oldSel, &d.Spec.Template), validateDeploymentStrategy(&d.Spec)...)
	},
}

var leasesResource = &Resource{
	GroupVersion: coordinationv1.SchemeGroupVersion, Name: "leases", Kind: "Lease", Namespaced: true,
	Columns: leaseColumns, Row: leaseRow,
	New:     func() runtime.Object { return &coordinationv1.Lease{} },
	NewList: func() runtime.Object { return &coordinationv1.LeaseList{} },
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

var serviceAccountsResource = &Resource{
	GroupVersion: corev1.SchemeGroupVersion, Name: "serviceaccounts", Kind: "ServiceAccount", Namespaced: true,
	ShortNames: []string{"sa"},
	New:        func() runtime.Object { return &corev1.ServiceAccount{} },
	NewList:    func() runtime.Object { return &corev1.ServiceAccountList{} },
	Columns:    []Column{{Name: "Secrets", Type: "integer"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		sa := obj.(*corev1.ServiceAccount)
		return []any{int64(len(sa.Secrets)), age(sa.CreationTimestamp, now)}
	},
}

// ReplicationControllers are the ancestors of ReplicaSets (seed 000 step 6
// names them): the same job with an equality-only selector, which defaults
// to the template's labels.
var replicationControllersResource = &Resource{
	GroupVersion: corev1.SchemeGroupVersion, Name: "replicationcontrollers", Kind: "ReplicationController", Namespaced: true,
	ShortNames: []string{"rc"}, Categories: []string{"all"}, Status: true, Scale: true,
	New:     func() runtime.Object { return &corev1.ReplicationController{} },
	NewList: func() runtime.Object { return &corev1.ReplicationControllerList{} },
	Columns: replicaSetColumns,
	Row: func(obj runtime.Object, now time.Time) []any {
		rc := obj.(*corev1.ReplicationController)
		var names, images string
		if rc.Spec.Template != nil {
			names, images = containersAndImages(&rc.Spec.Template.Spec)
		}
		return []any{int64(*rc.Spec.Replicas), int64(rc.Status.Replicas), int64(rc.Status.ReadyReplicas),
			age(rc.CreationTimestamp, now), names, images, orNone(labels.SelectorFromSet(rc.Spec.Selector).String())}
	},
	PrepareForCreate: func(obj runtime.Object) {
		obj.(*corev1.ReplicationController).Status = corev1.ReplicationControllerStatus{}
	},
	Default: func(obj runtime.Object) {
		rc := obj.(*corev1.ReplicationController)
		defaultReplicas(&rc.Spec.Replicas)
		if rc.Spec.Template != nil {
			if len(rc.Spec.Selector) == 0 {
				rc.Spec.Selector = rc.Spec.Template.Labels
			}
			if len(rc.Labels) == 0 {
				rc.Labels = rc.Spec.Template.Labels
			}
			defaultPodSpec(&rc.Spec.Template.Spec)
		}
	},
	Validate: func(obj, _ runtime.Object) field.ErrorList {
		rc := obj.(*corev1.ReplicationController)
		spec := field.NewPath("spec")
		if rc.Spec.Template == nil {
			return field.ErrorList{field.Required(spec.Child("template"), "")}
		}
		return validateWorkload(rc.Spec.Replicas, &metav1.LabelSelector{MatchLabels: rc.Spec.Selector}, nil, rc.Spec.Template)
	},
	Fields: func(obj runtime.Object) fields.Set {
		return fields.Set{"status.replicas": int32String(obj.(*corev1.ReplicationController).Status.Replicas)}
	},
}
