package predicates

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mkube/mkube/apiserver/admission"
)

// NamespaceReader reads the namespace of one request, once for all the
// webhooks and policies that ask: for namespace selectors and for the
// namespaceObject of policies' CEL.
type NamespaceReader struct {
	Cluster Cluster
	A       *admission.Attributes

	ns   *corev1.Namespace
	err  error
	read bool
}

// Get is the request's namespace; nil for a cluster-scoped request. A
// namespace that does not exist is a NotFound, which refuses the request
// with a 404, as Kubernetes does.
func (r *NamespaceReader) Get(ctx context.Context) (*corev1.Namespace, error) {
	name := Namespace(r.A)
	if name == "" {
		return nil, nil
	}
	if !r.read {
		r.read = true
		obj, err := r.Cluster.Get(ctx, Namespaces, "", name)
		switch {
		case apierrors.IsNotFound(err):
			r.err = err
		case err != nil:
			r.err = apierrors.NewInternalError(err)
		default:
			r.ns = obj.(*corev1.Namespace)
		}
	}
	return r.ns, r.err
}

// Matches matches a namespaceSelector against the labels of the
// request's namespace. A cluster-scoped object other than a namespace is
// always matched (the selector cannot exempt it); a namespace being
// created or updated is judged by its new labels.
func (r *NamespaceReader) Matches(ctx context.Context, sel labels.Selector) (bool, error) {
	if Namespace(r.A) == "" || sel.Empty() {
		return true, nil
	}
	if own, ok := NewLabels(r.A); ok {
		return sel.Matches(own), nil
	}
	ns, err := r.Get(ctx)
	if err != nil {
		return false, err
	}
	return sel.Matches(labels.Set(ns.Labels)), nil
}
