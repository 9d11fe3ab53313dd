// Package storagemigration declares storagemigration.k8s.io/v1
// StorageVersionMigrations: a request to rewrite every stored object of
// one resource, so that etcd holds them all in the current storage
// version (or under a new encryption key) before an old one is dropped.
// Kubernetes' storage version migrator, in kube-controller-manager,
// rewrites them and reports Running, then Succeeded or Failed. mkube
// stores each kind in one version only and runs no migrator: a
// migration is served and validated, and its status is what a client
// writes.
//
// It all lives in storageversionmigrations.go: the kind, its validation and
// its status updates.
package storagemigration

import (
	"strings"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

var StorageVersionMigrations = &apiserver.Resource{
	GroupVersion: svmv1.SchemeGroupVersion, Name: "storageversionmigrations", Kind: "StorageVersionMigration",
	Subresources: []apiserver.Subresource{apiserver.WritesSubresource("status", updateStatus)},
	New:          func() runtime.Object { return &svmv1.StorageVersionMigration{} },
	NewList:      func() runtime.Object { return &svmv1.StorageVersionMigrationList{} },
	PrepareForCreate: func(obj runtime.Object) {
		obj.(*svmv1.StorageVersionMigration).Status = svmv1.StorageVersionMigrationStatus{}
	},
	Validate: func(obj, old runtime.Object) field.ErrorList {
		m := obj.(*svmv1.StorageVersionMigration)
		errs := validateSpec(&m.Spec)
		if old != nil {
			// Another resource to migrate is another migration.
			errs = append(errs, apivalidation.ValidateImmutableField(m.Spec, old.(*svmv1.StorageVersionMigration).Spec, field.NewPath("spec"))...)
		}
		return errs
	},
	// kube-apiserver's StorageVersionMigration printer (no Age column).
	Columns: []apiserver.Column{{Name: "Resource", Type: "string"}, {Name: "Status", Type: "string"}},
	Row: func(obj runtime.Object, _ time.Time) []any {
		m := obj.(*svmv1.StorageVersionMigration)
		return []any{m.Spec.Resource.String(), phase(m)}
	},
}

// validateSpec: the resource is a DNS-1035 label, its group (empty for
// the core group) a DNS subdomain.
func validateSpec(spec *svmv1.StorageVersionMigrationSpec) field.ErrorList {
	path := field.NewPath("spec", "resource")
	var errs field.ErrorList
	if r := spec.Resource.Resource; r == "" {
		errs = append(errs, field.Required(path.Child("resource"), "resource is required to be set"))
	} else if msgs := validation.IsDNS1035Label(r); len(msgs) > 0 {
		errs = append(errs, field.Invalid(path.Child("resource"), r, strings.Join(msgs, ",")))
	}
	if g := spec.Resource.Group; g != "" {
		if msgs := validation.IsDNS1123Subdomain(g); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Child("group"), g, strings.Join(msgs, ",")))
		}
	}
	return errs
}

// phase is the printer's Status: the last of Running, Failed and
// Succeeded that is true, or Unknown.
func phase(m *svmv1.StorageVersionMigration) string {
	p := "Unknown"
	for _, c := range m.Status.Conditions {
		switch svmv1.MigrationConditionType(c.Type) {
		case svmv1.MigrationRunning, svmv1.MigrationFailed, svmv1.MigrationSucceeded:
			if c.Status == metav1.ConditionTrue {
				p = c.Type
			}
		}
	}
	return p
}

// updateStatus is ValidateStorageVersionMigrationStatusUpdate: valid
// conditions, a resourceVersion that once set stays, and an outcome
// that, once reached, is not taken back nor contradicted.
func updateStatus(cur, next runtime.Object, _ time.Time) (runtime.Object, field.ErrorList) {
	old := cur.(*svmv1.StorageVersionMigration)
	out := old.DeepCopy()
	out.Status = next.(*svmv1.StorageVersionMigration).Status
	path := field.NewPath("status")
	errs := metav1validation.ValidateConditions(out.Status.Conditions, path.Child("conditions"))
	if rv := old.Status.ResourceVersion; rv != "" && rv != out.Status.ResourceVersion {
		errs = append(errs, field.Invalid(path.Child("resourceVersion"), out.Status.ResourceVersion, "field is immutable"))
	}
	succeeded, failed := isTrue(out, svmv1.MigrationSucceeded), isTrue(out, svmv1.MigrationFailed)
	conditions := path.Child("conditions")
	if succeeded && failed {
		errs = append(errs, field.Invalid(conditions, out.Status.Conditions, "Both success and failed conditions cannot be true at the same time"))
	}
	if isTrue(old, svmv1.MigrationSucceeded) && !succeeded {
		errs = append(errs, field.Invalid(conditions, out.Status.Conditions, "Success condition cannot be set to false once it is true"))
	}
	if isTrue(old, svmv1.MigrationFailed) && !failed {
		errs = append(errs, field.Invalid(conditions, out.Status.Conditions, "Failed condition cannot be set to false once it is true"))
	}
	return out, errs
}

func isTrue(m *svmv1.StorageVersionMigration, t svmv1.MigrationConditionType) bool {
	return apimeta.IsStatusConditionTrue(m.Status.Conditions, string(t))
}
