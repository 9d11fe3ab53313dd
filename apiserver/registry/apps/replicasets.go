package apps

import (
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/registry/core"
)

// ReplicaSets keep spec.replicas pods of their template running (seed 000
// step 6); the replicaset controller creates and deletes the pods.
var ReplicaSets = &apiserver.Resource{
	GroupVersion: appsv1.SchemeGroupVersion, Name: "replicasets", Kind: "ReplicaSet", Namespaced: true,
	ShortNames: []string{"rs"}, Categories: []string{"all"}, Columns: core.ReplicatedColumns, Row: replicaSetRow,
	Subresources:     []apiserver.Subresource{apiserver.StatusSubresource, apiserver.ScaleSubresource},
	New:              func() runtime.Object { return &appsv1.ReplicaSet{} },
	NewList:          func() runtime.Object { return &appsv1.ReplicaSetList{} },
	PrepareForCreate: func(obj runtime.Object) { obj.(*appsv1.ReplicaSet).Status = appsv1.ReplicaSetStatus{} },
	Default: func(obj runtime.Object) {
		rs := obj.(*appsv1.ReplicaSet)
		core.DefaultReplicas(&rs.Spec.Replicas)
		core.DefaultPodSpec(&rs.Spec.Template.Spec)
	},
	Validate: func(obj, old runtime.Object) field.ErrorList {
		rs := obj.(*appsv1.ReplicaSet)
		var oldSel *metav1.LabelSelector
		if old != nil {
			oldSel = old.(*appsv1.ReplicaSet).Spec.Selector
		}
		return core.ValidateWorkload(rs.Spec.Replicas, rs.Spec.Selector, oldSel, &rs.Spec.Template)
	},
	Fields: func(obj runtime.Object) fields.Set {
		return fields.Set{"status.replicas": strconv.Itoa(int(obj.(*appsv1.ReplicaSet).Status.Replicas))}
	},
	WriteStep: core.WorkloadWriteStep,
}

func replicaSetRow(obj runtime.Object, now time.Time) []any {
	rs := obj.(*appsv1.ReplicaSet)
	names, images := core.ContainersAndImages(&rs.Spec.Template.Spec)
	return []any{int64(*rs.Spec.Replicas), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas),
		apiserver.Age(rs.CreationTimestamp, now), names, images, core.SelectorString(rs.Spec.Selector)}
}
