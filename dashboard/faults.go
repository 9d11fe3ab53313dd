package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mkube/mkube/client"
)

// The fault buttons do what `mkube crash`, `mkube oom` and `mkube freeze`
// do (cmd/mkube/faults.go): POST to the node's kubelet through the API
// server's node proxy,
//
//	POST /api/v1/nodes/<node>/proxy/mkube/faults/<ns>/<pod>/<container>/crash?exitCode=1
//
// as the dashboard's own identity. The API server decides: RBAC allows
// it to whom may create nodes/proxy, which the dashboard's default role,
// mkube:dashboard, does not include. So a read-only dashboard's buttons
// answer the API server's 403, passed through to the browser as the
// metav1.Status it is, and nothing changes; a dashboard run with a
// kubeconfig that may (the admin's, or --server on the learner's plain
// port) injects the fault.

// Fault is what a button asks for.
type Fault struct {
	Action    string `json:"action"` // crash, oom, freeze or thaw
	Namespace string `json:"namespace,omitempty"`
	Pod       string `json:"pod,omitempty"`  // crash and oom
	Node      string `json:"node,omitempty"` // freeze and thaw
}

// Faults sends faults through the API server.
type Faults struct {
	client  *client.Client
	watcher *Watcher
}

// path is the API path of f, or an error of the API's kind.
func (fs *Faults) path(f Fault) (string, error) {
	switch f.Action {
	case "crash", "oom":
		obj, ok := fs.watcher.Cache(client.Pods).Get(f.Namespace + "/" + f.Pod)
		if !ok {
			return "", apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, f.Pod)
		}
		pod := obj.(*corev1.Pod)
		if pod.Spec.NodeName == "" {
			return "", apierrors.NewBadRequest(fmt.Sprintf("pod %s/%s is not scheduled to a node yet", f.Namespace, f.Pod))
		}
		q := ""
		if f.Action == "crash" {
			q = "?exitCode=1"
		}
		return fmt.Sprintf("/api/v1/nodes/%s/proxy/mkube/faults/%s/%s/%s/%s%s", url.PathEscape(pod.Spec.NodeName),
			url.PathEscape(pod.Namespace), url.PathEscape(pod.Name), url.PathEscape(pod.Spec.Containers[0].Name), f.Action, q), nil
	case "freeze", "thaw":
		if f.Node == "" {
			return "", apierrors.NewBadRequest("a node is required")
		}
		return fmt.Sprintf("/api/v1/nodes/%s/proxy/mkube/faults/freeze?frozen=%t", url.PathEscape(f.Node), f.Action == "freeze"), nil
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("unknown fault %q: crash, oom, freeze or thaw", f.Action))
}

// Send injects f, or returns why not: an *apierrors.StatusError.
func (fs *Faults) Send(ctx context.Context, f Fault) error {
	p, err := fs.path(f)
	if err != nil {
		return err
	}
	if err := fs.client.Do(ctx, "POST", p, nil, nil); err != nil {
		if st := apierrors.APIStatus(nil); errors.As(err, &st) {
			return err
		}
		return apierrors.NewInternalError(err)
	}
	return nil
}

// Allowed asks the API server whether the dashboard's identity may
// inject faults (create nodes/proxy), so that the page can say so before
// a button is pressed. The API server still decides each request.
func (fs *Faults) Allowed(ctx context.Context) (bool, string, error) {
	review := &authorizationv1.SelfSubjectAccessReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SelfSubjectAccessReview"},
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: "create", Resource: "nodes", Subresource: "proxy"}},
	}
	out := &authorizationv1.SelfSubjectAccessReview{}
	if err := fs.client.Do(ctx, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review, out); err != nil {
		return false, "", err
	}
	return out.Status.Allowed, out.Status.Reason, nil
}
