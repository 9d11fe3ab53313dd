package apiserver

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mkube/mkube/apiserver/admission"
)

var _ admission.StatusWriter = objects{}

// UpdateStatus is the write admission may make (admission.StatusWriter):
// the status subresource's update, with its admission and its
// resourceVersion precondition (409 if obj is stale), made by the server
// itself, so without authorization, audit or a managedFields entry. The
// request's context carries its dry run, which Storage.Update honours.
func (o objects) UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, obj runtime.Object) (runtime.Object, error) {
	st, err := o.storage(gvr)
	if err != nil {
		return nil, err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return st.Update(ctx, m.GetNamespace(), m.GetName(), func(cur runtime.Object) (runtime.Object, error) {
		return st.prepareUpdate(ctx, cur, obj.DeepCopyObject(), statusName)
	})
}
