package apiserver

import "net/http"

// StatusSubresource is .../status: PUT and PATCH there write only .status,
// and the main resource's PUT keeps the stored status. It is how
// controllers and the kubelet report what is (seed step 13) without
// racing the user's spec.
var StatusSubresource = Subresource{Name: statusName, Verbs: []string{"get", "patch", "update"}, Serve: serveStatus}

func serveStatus(q *Request) {
	switch q.Info.Verb {
	case "get":
		obj, err := q.Storage.Get(q.Context(), q.Info.Namespace, q.Info.Name)
		q.Respond(http.StatusOK, obj, err)
	case "update":
		q.srv.update(q, "status")
	case "patch":
		q.srv.patch(q, "status")
	}
}

const statusName = "status"
