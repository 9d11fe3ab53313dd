package predicates

import (
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8sadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/mkube/mkube/apiserver/admission"
)

// Versioned is the request's object and old object as kind: themselves
// for the request's own kind; for another version of a custom resource
// (an equivalent match), a copy that says that version, which is all a
// CustomResourceDefinition's conversion None changes.
func Versioned(a *admission.Attributes, kind schema.GroupVersionKind) (obj, old runtime.Object, err error) {
	if kind == a.Kind {
		return a.Object, a.OldObject, nil
	}
	convert := func(o runtime.Object) (runtime.Object, error) {
		if o == nil {
			return nil, nil
		}
		u, ok := o.(*unstructured.Unstructured)
		if !ok {
			return nil, apierrors.NewInternalError(fmt.Errorf("unable to convert to %v: mkube converts only custom resources between versions", kind))
		}
		u = u.DeepCopy()
		u.SetGroupVersionKind(kind)
		return u, nil
	}
	if obj, err = convert(a.Object); err != nil {
		return nil, nil, err
	}
	old, err = convert(a.OldObject)
	return obj, old, err
}

// CELAttributes is the request as k8s.io/apiserver's CEL libraries take
// it (the object, oldObject and request variables), as kind.
func CELAttributes(a *admission.Attributes, kind schema.GroupVersionKind, u authenticationv1.UserInfo) (*k8sadmission.VersionedAttributes, error) {
	obj, old, err := Versioned(a, kind)
	if err != nil {
		return nil, err
	}
	rec := k8sadmission.NewAttributesRecord(obj, old, a.Kind, Namespace(a), a.Name, a.Resource, a.Subresource,
		k8sadmission.Operation(a.Operation), a.Options, a.DryRun, userInfo(u))
	va := &k8sadmission.VersionedAttributes{Attributes: rec, VersionedKind: kind}
	va.VersionedObject.Set(obj)
	va.VersionedOldObject.Set(old)
	return va, nil
}

// userInfo is the authenticated user as k8s.io/apiserver's libraries
// take it.
func userInfo(u authenticationv1.UserInfo) user.Info {
	extra := map[string][]string{}
	for k, v := range u.Extra {
		extra[k] = v
	}
	return &user.DefaultInfo{Name: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra}
}
