package apiserver

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mkube/mkube/apiserver/admission"
	"github.com/mkube/mkube/apiserver/kubeletclient"
)

// Request is one API request as a handler sees it: the HTTP exchange, what
// the path asks for, and the storage of the resource it names. A
// Subresource's Serve gets one; its methods are the few things a
// subresource needs of the server.
type Request struct {
	W       http.ResponseWriter
	R       *http.Request
	Info    RequestInfo
	Storage *Storage // the storage of the resource the path names
	srv     *Server
}

// Context is the request's context: it ends when the client goes.
func (q *Request) Context() context.Context { return q.R.Context() }

// Now is the server's clock.
func (q *Request) Now() time.Time { return q.srv.clock.Now() }

// Log is the server's logger.
func (q *Request) Log() *slog.Logger { return q.srv.log }

// StorageFor is the storage of another resource (pods/eviction reads the
// PodDisruptionBudgets, pods/log the Nodes); nil if it is not served.
func (q *Request) StorageFor(gvr schema.GroupVersionResource) *Storage { return q.srv.StorageFor(gvr) }

// Kubelet is the server's client of the kubelets' port (Config.Kubelet).
func (q *Request) Kubelet() *kubeletclient.Client { return q.srv.cfg.Kubelet }

// DecodeBody reads the body as an object of the resource's own kind,
// honouring ?fieldValidation.
func (q *Request) DecodeBody() (runtime.Object, error) { return q.srv.decodeBody(q) }

// DecodeBodyAs reads the body as another kind (a Binding, an Eviction).
func (q *Request) DecodeBodyAs(gvk schema.GroupVersionKind, into runtime.Object) (runtime.Object, error) {
	data, err := readBody(q.R)
	if err != nil {
		return nil, err
	}
	return decodeInto(data, gvk, into)
}

// Respond answers with obj as JSON and the code, or with err as a Status.
func (q *Request) Respond(code int, obj any, err error) { respond(q.W, code, obj, err) }

// Stored logs a write the handler made, in the seed's terms where it is
// one of seed 000's steps.
func (q *Request) Stored(obj runtime.Object) { q.srv.logWrite(q, obj) }

// Admit runs the admission chain on a create of this subresource whose
// body is obj (a TokenRequest), as kube-apiserver's createValidation:
// NodeRestriction judges what a node may ask for.
func (q *Request) Admit(obj runtime.Object) error {
	return q.srv.cfg.Admission.Admit(q.Context(), &admission.Attributes{Operation: admission.Create,
		Resource: q.Storage.res.GroupVersionResource(), Subresource: q.Info.Subresource, Namespace: q.Info.Namespace, Object: obj, Now: q.Now()},
		objects{q.srv})
}

// Fail answers with err as a Status.
func (q *Request) Fail(err error) { writeError(q.W, err) }
