package apps

import (
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// ControllerRevisions are the history of a DaemonSet's or StatefulSet's
// pod template: each revision holds a snapshot of the template (data) and
// its number (revision). The controllers create one per template they
// have run, label their pods with the revision's hash, and a rollback
// (`kubectl rollout undo`) copies an old revision's data back into the
// spec. Deployments keep their history in ReplicaSets instead.
var ControllerRevisions = &apiserver.Resource{
	GroupVersion: appsv1.SchemeGroupVersion, Name: "controllerrevisions", Kind: "ControllerRevision", Namespaced: true,
	New:     func() runtime.Object { return &appsv1.ControllerRevision{} },
	NewList: func() runtime.Object { return &appsv1.ControllerRevisionList{} },
	Validate: func(obj, old runtime.Object) field.ErrorList {
		cr := obj.(*appsv1.ControllerRevision)
		// ValidateControllerRevision (its name, a DNS subdomain, is
		// checked with the other metadata).
		var errs field.ErrorList
		if cr.Data.Raw == nil && cr.Data.Object == nil {
			errs = append(errs, field.Required(field.NewPath("data"), "data is mandatory"))
		}
		errs = append(errs, apivalidation.ValidateNonnegativeField(cr.Revision, field.NewPath("revision"))...)
		if old != nil {
			// A revision is a snapshot: its data never changes, only its
			// number (when an old template becomes current again).
			errs = append(errs, apivalidation.ValidateImmutableField(cr.Data, old.(*appsv1.ControllerRevision).Data, field.NewPath("data"))...)
		}
		return errs
	},
	// kube-apiserver's ControllerRevision printer.
	Columns: []apiserver.Column{{Name: "Controller", Type: "string"}, {Name: "Revision", Type: "integer"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		cr := obj.(*appsv1.ControllerRevision)
		return []any{controllerName(cr), cr.Revision, apiserver.Age(cr.CreationTimestamp, now)}
	},
}

// controllerName is the printer's "daemonset.apps/web", or "<none>".
func controllerName(obj metav1.Object) string {
	ref := metav1.GetControllerOf(obj)
	if ref == nil {
		return "<none>"
	}
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	return strings.ToLower(gv.WithKind(ref.Kind).GroupKind().String()) + "/" + ref.Name
}
