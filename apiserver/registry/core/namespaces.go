package core

import (
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// Namespaces partition the namespaced kinds. Deleting one waits, through
// the "kubernetes" finalizer, until the namespace controller has deleted
// everything in it and says so on namespaces/finalize.
var Namespaces = &apiserver.Resource{
	GroupVersion: v1, Name: "namespaces", Kind: "Namespace",
	ShortNames: []string{"ns"}, Columns: namespaceColumns, Row: namespaceRow,
	Subresources: []apiserver.Subresource{apiserver.StatusSubresource, finalizeSubresource},
	// Kubernetes' namespace status strategy keeps only the spec: a status
	// patch may carry labels and annotations too.
	StatusWritesMetadata: true,
	New:                  func() runtime.Object { return &corev1.Namespace{} },
	NewList:              func() runtime.Object { return &corev1.NamespaceList{} },
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
		name := obj.(*corev1.Namespace).Name
		var errs field.ErrorList
		for _, msg := range validation.IsDNS1123Label(name) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), name, msg))
		}
		return errs
	},
	Fields: func(obj runtime.Object) fields.Set {
		return fields.Set{"status.phase": string(obj.(*corev1.Namespace).Status.Phase)}
	},
	Bootstrap: builtinNamespaces(func(name string) runtime.Object {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}),
}

// builtinNamespaces makes one object for each namespace every cluster
// starts with.
func builtinNamespaces(object func(namespace string) runtime.Object) []runtime.Object {
	var out []runtime.Object
	for _, name := range []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease} {
		out = append(out, object(name))
	}
	return out
}

var namespaceColumns = []apiserver.Column{{Name: "Status", Type: "string"}, {Name: "Age", Type: "string"}}

func namespaceRow(obj runtime.Object, now time.Time) []any {
	ns := obj.(*corev1.Namespace)
	return []any{string(ns.Status.Phase), apiserver.Age(ns.CreationTimestamp, now)}
}

// finalizeSubresource is PUT namespaces/<name>/finalize: the namespace
// controller's way to say "my part of the deletion is done" by removing
// its name from spec.finalizers. Nothing else of the namespace changes.
var finalizeSubresource = apiserver.Subresource{Name: "finalize", Verbs: []string{"update"}, Serve: serveFinalize}

func serveFinalize(q *apiserver.Request) {
	obj, err := q.DecodeBody()
	if err != nil {
		q.Fail(err)
		return
	}
	want := obj.(*corev1.Namespace).Spec.Finalizers
	updated, err := q.Storage.Update(q.Context(), "", q.Info.Name, func(cur runtime.Object) (runtime.Object, error) {
		ns := cur.(*corev1.Namespace)
		ns.Spec.Finalizers = want
		return ns, nil
	})
	if err == nil {
		q.Stored(updated)
	}
	q.Respond(http.StatusOK, updated, err)
}
