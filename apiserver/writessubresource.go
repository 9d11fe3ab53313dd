package apiserver

import (
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// WritesSubresource is a subresource like .../status whose PUT and PATCH
// write the part of the object that update picks, with update's own
// validation: a CertificateSigningRequest's approval writes only its
// status.conditions, its status only the certificate and the conditions
// other than Approved and Denied (Kubernetes' csrApprovalStrategy and
// csrStatusStrategy). GET returns the whole object.
func WritesSubresource(name string, update func(cur, next runtime.Object, now time.Time) (runtime.Object, field.ErrorList)) Subresource {
	return Subresource{Name: name, Verbs: []string{"get", "patch", "update"}, Serve: serveWrites, Update: update}
}

func serveWrites(q *Request) {
	switch q.Info.Verb {
	case "get":
		obj, err := q.Storage.Get(q.Context(), q.Info.Namespace, q.Info.Name)
		q.Respond(http.StatusOK, obj, err)
	case "update":
		q.srv.update(q, q.Info.Subresource)
	case "patch":
		q.srv.patch(q, q.Info.Subresource)
	}
}

// updatesItself reports whether the subresource validates its own writes.
func (r *Resource) updatesItself(subresource string) bool {
	sub, ok := r.subresource(subresource)
	return ok && sub.Update != nil
}
