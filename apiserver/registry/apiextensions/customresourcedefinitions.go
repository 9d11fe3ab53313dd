// Package apiextensions declares apiextensions.k8s.io/v1
// CustomResourceDefinitions: a user describes a kind (its group, names,
// versions and OpenAPI schema) and the API server starts serving it as if
// it were built in, `kubectl get widgets` and all. Package customresource
// is the half that serves the kinds; this is the definition itself, kept
// as kube-apiserver's apiextensions-apiserver keeps it, with its own
// validation (Kubernetes' library, not a copy).
//
// It all lives in customresourcedefinitions.go: the
// CustomResourceDefinition kind, its validation, status and finalizer.
package apiextensions

import (
	"context"
	"time"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// CustomResourceCleanupFinalizer holds a deleted definition until every
// object of its kind is gone (customresource.Controller removes them).
const CustomResourceCleanupFinalizer = apiextensionsv1.CustomResourceCleanupFinalizer

var CustomResourceDefinitions = &apiserver.Resource{
	GroupVersion: apiextensionsv1.SchemeGroupVersion, Name: "customresourcedefinitions", Kind: "CustomResourceDefinition",
	ShortNames:   []string{"crd", "crds"},
	Categories:   []string{"api-extensions"},
	Subresources: []apiserver.Subresource{apiserver.StatusSubresource},
	New:          func() runtime.Object { return &apiextensionsv1.CustomResourceDefinition{} },
	NewList:      func() runtime.Object { return &apiextensionsv1.CustomResourceDefinitionList{} },
	Columns:      []apiserver.Column{{Name: "Created At", Type: "date"}},
	Row: func(obj runtime.Object, _ time.Time) []any {
		return []any{obj.(*apiextensionsv1.CustomResourceDefinition).CreationTimestamp.UTC().Format(time.RFC3339)}
	},
	PrepareForCreate: func(obj runtime.Object) {
		obj.(*apiextensionsv1.CustomResourceDefinition).Status = apiextensionsv1.CustomResourceDefinitionStatus{}
	},
	Default: func(obj runtime.Object) {
		crd := obj.(*apiextensionsv1.CustomResourceDefinition)
		apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
		recordStorageVersion(crd)
	},
	Validate: validate,
	// The first DELETE marks the definition Terminating and holds it with
	// the cleanup finalizer, as Kubernetes does: its objects go first.
	BeginDelete: func(obj runtime.Object) bool {
		crd := obj.(*apiextensionsv1.CustomResourceDefinition)
		if !hasFinalizer(crd) {
			crd.Finalizers = append(crd.Finalizers, CustomResourceCleanupFinalizer)
		}
		SetCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Terminating,
			Status: apiextensionsv1.ConditionTrue, Reason: "InstanceDeletionPending", LastTransitionTime: metav1.Now(),
			Message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"})
		return true
	},
}

// recordStorageVersion adds the version objects are stored in to
// status.storedVersions, which only a status update may shrink (once a
// storage migration has rewritten every object).
func recordStorageVersion(crd *apiextensionsv1.CustomResourceDefinition) {
	for _, v := range crd.Spec.Versions {
		if !v.Storage {
			continue
		}
		for _, stored := range crd.Status.StoredVersions {
			if stored == v.Name {
				return
			}
		}
		crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)
		return
	}
}

// validate is Kubernetes' own ValidateCustomResourceDefinition (and its
// update rules), on the internal type the library checks.
func validate(obj, old runtime.Object) field.ErrorList {
	crd, err := internal(obj.(*apiextensionsv1.CustomResourceDefinition))
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), "", err.Error())}
	}
	ctx := context.Background()
	if old == nil {
		return crdvalidation.ValidateCustomResourceDefinition(ctx, crd)
	}
	prev, err := internal(old.(*apiextensionsv1.CustomResourceDefinition))
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), "", err.Error())}
	}
	return crdvalidation.ValidateCustomResourceDefinitionUpdate(ctx, crd, prev)
}

// internal converts a definition to the version-independent type
// Kubernetes' validation and schema libraries take.
func internal(crd *apiextensionsv1.CustomResourceDefinition) (*apiextensionsinternal.CustomResourceDefinition, error) {
	out := &apiextensionsinternal.CustomResourceDefinition{}
	err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd.DeepCopy(), out, nil)
	return out, err
}

func hasFinalizer(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, f := range crd.Finalizers {
		if f == CustomResourceCleanupFinalizer {
			return true
		}
	}
	return false
}

// SetCondition sets a condition of the definition's status, keeping its
// lastTransitionTime when the status does not change.
func SetCondition(crd *apiextensionsv1.CustomResourceDefinition, c apiextensionsv1.CustomResourceDefinitionCondition) {
	for i, cur := range crd.Status.Conditions {
		if cur.Type != c.Type {
			continue
		}
		if cur.Status == c.Status {
			c.LastTransitionTime = cur.LastTransitionTime
		}
		crd.Status.Conditions[i] = c
		return
	}
	crd.Status.Conditions = append(crd.Status.Conditions, c)
}
