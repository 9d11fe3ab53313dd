package customresource

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/mkube/mkube/apiserver/webhookclient"
)

// Converting a custom resource between the versions of its definition,
// as spec.conversion says (apiextensions-apiserver's converters):
//
//	None     only apiVersion changes: every version has the same fields.
//	Webhook  the object is sent, in a ConversionReview (v1 or v1beta1,
//	         the first of conversionReviewVersions this server speaks),
//	         with the apiVersion it must become, to the webhook's url or
//	         Service; the webhook answers with the converted object.
//
// An object is converted whenever the version a client speaks is not the
// version it was stored at: on its way into etcd (a v2 object of a
// definition that stores v1), and on every read of it at another version
// (a get, a list, each watch cache's events). Objects keep the version
// they were stored at until written again, so a list may hold objects
// stored at two versions, each converted to the one asked for. The
// webhook is never asked to convert an object to its own version.
//
// The webhook may change the object's fields, labels and annotations;
// the rest of its metadata (name, UID, resourceVersion, ...) is kept as
// it was, and an answer that changes the kind, the name, the namespace or
// the UID, or gives the wrong apiVersion, fails the conversion. A failed
// conversion fails the request (500, "conversion webhook for
// stable.example.com/v1, Kind=Widget failed: ...").

// conversionTimeout bounds a call to a conversion webhook, as
// kube-apiserver's webhook client does.
const conversionTimeout = 30 * time.Second

// Webhooks are what a definition's conversion webhook is called with:
// the HTTPS clients, and the API server's objects, through which a
// webhook's Service is reached.
type Webhooks struct {
	Clients *webhookclient.Clients
	Objects webhookclient.Objects
	Log     *slog.Logger
}

// converter turns u into apiVersion; u is its own (a copy).
type converter func(u *unstructured.Unstructured, apiVersion string) (*unstructured.Unstructured, error)

// converterFor is the definition's converter.
func converterFor(crd *apiextensionsv1.CustomResourceDefinition, hooks *Webhooks) converter {
	conv := crd.Spec.Conversion
	if conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter || conv.Webhook == nil || conv.Webhook.ClientConfig == nil {
		return func(u *unstructured.Unstructured, apiVersion string) (*unstructured.Unstructured, error) {
			u.SetAPIVersion(apiVersion)
			return u, nil
		}
	}
	w := &conversionWebhook{crd: crd.Name, config: clientConfig(conv.Webhook.ClientConfig), reviewVersions: conv.Webhook.ConversionReviewVersions, hooks: hooks}
	return w.convert
}

// clientConfig is the webhook's address in admission webhooks' words:
// the two types have the same fields.
func clientConfig(c *apiextensionsv1.WebhookClientConfig) admissionregistrationv1.WebhookClientConfig {
	out := admissionregistrationv1.WebhookClientConfig{URL: c.URL, CABundle: c.CABundle}
	if s := c.Service; s != nil {
		out.Service = &admissionregistrationv1.ServiceReference{Namespace: s.Namespace, Name: s.Name, Path: s.Path, Port: s.Port}
	}
	return out
}

type conversionWebhook struct {
	crd            string
	config         admissionregistrationv1.WebhookClientConfig
	reviewVersions []string
	hooks          *Webhooks
}

func (w *conversionWebhook) convert(u *unstructured.Unstructured, apiVersion string) (*unstructured.Unstructured, error) {
	if u.GetAPIVersion() == apiVersion {
		return u, nil
	}
	failed := func(format string, args ...any) error {
		return fmt.Errorf("conversion webhook for %v "+format, append([]any{u.GroupVersionKind()}, args...)...)
	}
	if w.hooks == nil {
		return nil, failed("failed: this API server calls no webhooks")
	}
	uid := uuid.NewUUID()
	review, err := conversionReview(w.reviewVersions, u, apiVersion, uid)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(review)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), conversionTimeout)
	defer cancel()
	answer, err := w.hooks.Clients.Post(ctx, w.config, w.hooks.Objects, body)
	if err != nil {
		w.hooks.Log.Warn("conversion webhook failed", "crd", w.crd, "from", u.GetAPIVersion(), "to", apiVersion, "object", key(u), "err", err)
		return nil, failed("failed: %v", err)
	}
	objects, err := convertedObjects(answer, uid)
	if err != nil {
		return nil, failed("failed: %v", err)
	}
	if len(objects) != 1 {
		return nil, failed("returned %d objects, expected 1", len(objects))
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(objects[0].Raw); err != nil {
		return nil, failed("returned invalid object: %v", err)
	}
	if got := out.GetAPIVersion(); got != apiVersion {
		return nil, failed("returned invalid object at index 0: invalid groupVersion (expected %v, received %v)", apiVersion, got)
	}
	if err := sameObject(u, out); err != nil {
		return nil, failed("returned invalid object: %v", err)
	}
	keepMetadata(u, out)
	w.hooks.Log.Debug("converted by the webhook", "crd", w.crd, "from", u.GetAPIVersion(), "to", apiVersion, "object", key(u))
	return out, nil
}

// conversionReview is the request for the first review version both
// sides speak. The v1 and v1beta1 ConversionReviews have the same
// fields: one type serves both, with the version's apiVersion.
func conversionReview(versions []string, u *unstructured.Unstructured, apiVersion string, uid types.UID) (runtime.Object, error) {
	raw, err := u.MarshalJSON()
	if err != nil {
		return nil, err
	}
	for _, v := range versions {
		if reviewVersions[apiextensionsv1.GroupName+"/"+v] {
			return &apiextensionsv1.ConversionReview{
				TypeMeta: metav1.TypeMeta{APIVersion: apiextensionsv1.GroupName + "/" + v, Kind: "ConversionReview"},
				Request:  &apiextensionsv1.ConversionRequest{UID: uid, DesiredAPIVersion: apiVersion, Objects: []runtime.RawExtension{{Raw: raw}}}}, nil
		}
	}
	return nil, fmt.Errorf("no supported conversion review versions")
}

// reviewVersions are the ConversionReview versions this server speaks.
var reviewVersions = map[string]bool{"apiextensions.k8s.io/v1": true, "apiextensions.k8s.io/v1beta1": true}

// convertedObjects reads the webhook's answer: a ConversionReview (v1 or
// v1beta1) whose response has the request's uid and succeeded.
func convertedObjects(answer []byte, uid types.UID) ([]runtime.RawExtension, error) {
	var review apiextensionsv1.ConversionReview
	if err := json.Unmarshal(answer, &review); err != nil {
		return nil, err
	}
	if !reviewVersions[review.APIVersion] {
		return nil, fmt.Errorf("unrecognized response type: %s, Kind=%s", review.APIVersion, review.Kind)
	}
	if review.Response == nil {
		return nil, fmt.Errorf("no response provided")
	}
	uidGot, result, objects := review.Response.UID, review.Response.Result, review.Response.ConvertedObjects
	if uidGot != uid {
		return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, uidGot)
	}
	if result.Status != metav1.StatusSuccess {
		if result.Message != "" {
			return nil, fmt.Errorf("response.result.status was '%s', not 'Success': %s", result.Status, result.Message)
		}
		return nil, fmt.Errorf("response.result.status was '%s', not 'Success'", result.Status)
	}
	return objects, nil
}

// sameObject is Kubernetes' validateConvertedObject: a conversion keeps
// what the object is.
func sameObject(in, out *unstructured.Unstructured) error {
	switch {
	case in.GetKind() != out.GetKind():
		return fmt.Errorf("must have the same kind: %v != %v", in.GetKind(), out.GetKind())
	case in.GetName() != out.GetName():
		return fmt.Errorf("must have the same name: %v != %v", in.GetName(), out.GetName())
	case in.GetNamespace() != out.GetNamespace():
		return fmt.Errorf("must have the same namespace: %v != %v", in.GetNamespace(), out.GetNamespace())
	case in.GetUID() != out.GetUID():
		return fmt.Errorf("must have the same UID: %v != %v", in.GetUID(), out.GetUID())
	}
	return nil
}

// keepMetadata gives out in's metadata, but for the labels and
// annotations the webhook answered with (Kubernetes' restoreObjectMeta).
func keepMetadata(in, out *unstructured.Unstructured) {
	labels, annotations := out.GetLabels(), out.GetAnnotations()
	md, _ := in.Object["metadata"].(map[string]any)
	out.Object["metadata"] = runtime.DeepCopyJSONValue(md)
	if md == nil {
		out.Object["metadata"] = map[string]any{}
	}
	out.SetLabels(labels)
	out.SetAnnotations(annotations)
}

func key(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return ns + "/" + u.GetName()
	}
	return u.GetName()
}
