package core

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// ReplicationControllers are the ancestors of ReplicaSets (seed 000 step 6
// names them): the same job with an equality-only selector, which defaults
// to the template's labels.
var ReplicationControllers = &apiserver.Resource{
	GroupVersion: v1, Name: "replicationcontrollers", Kind: "ReplicationController", Namespaced: true,
	ShortNames: []string{"rc"}, Categories: []string{"all"},
	Subresources: []apiserver.Subresource{apiserver.StatusSubresource, apiserver.ScaleSubresource},
	New:          func() runtime.Object { return &corev1.ReplicationController{} },
	NewList:      func() runtime.Object { return &corev1.ReplicationControllerList{} },
	Columns:      ReplicatedColumns,
	Row: func(obj runtime.Object, now time.Time) []any {
		rc := obj.(*corev1.ReplicationController)
		var names, images string
		if rc.Spec.Template != nil {
			names, images = ContainersAndImages(&rc.Spec.Template.Spec)
		}
		return []any{int64(*rc.Spec.Replicas), int64(rc.Status.Replicas), int64(rc.Status.ReadyReplicas),
			apiserver.Age(rc.CreationTimestamp, now), names, images, apiserver.OrNone(labels.SelectorFromSet(rc.Spec.Selector).String())}
	},
	PrepareForCreate: func(obj runtime.Object) {
		obj.(*corev1.ReplicationController).Status = corev1.ReplicationControllerStatus{}
	},
	Default: func(obj runtime.Object) {
		rc := obj.(*corev1.ReplicationController)
		DefaultReplicas(&rc.Spec.Replicas)
		if rc.Spec.Template != nil {
			if len(rc.Spec.Selector) == 0 {
				rc.Spec.Selector = rc.Spec.Template.Labels
			}
			if len(rc.Labels) == 0 {
				rc.Labels = rc.Spec.Template.Labels
			}
			DefaultPodSpec(&rc.Spec.Template.Spec)
		}
	},
	Validate: func(obj, _ runtime.Object) field.ErrorList {
		rc := obj.(*corev1.ReplicationController)
		spec := field.NewPath("spec")
		if rc.Spec.Template == nil {
			return field.ErrorList{field.Required(spec.Child("template"), "")}
		}
		return ValidateWorkload(rc.Spec.Replicas, &metav1.LabelSelector{MatchLabels: rc.Spec.Selector}, nil, rc.Spec.Template)
	},
	Fields: func(obj runtime.Object) fields.Set {
		return fields.Set{"status.replicas": strconv.Itoa(int(obj.(*corev1.ReplicationController).Status.Replicas))}
	},
	WriteStep: WorkloadWriteStep,
}
