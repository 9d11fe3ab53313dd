package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mkube/mkube/apiserver/admission"
	"github.com/mkube/mkube/apiserver/admission/webhook"
)

// The API server's side of admission webhooks and policies
// (apiserver/admission/webhook, apiserver/admission/policy): what a write
// tells them beyond what the built-in plugins need, the server's Objects
// as their Cluster, connects (pods/attach, exec, portforward) going
// through admission, and the warnings they send back to the client.

var _ admission.Webhooks = objects{}
var _ admission.Policies = objects{}
var _ webhook.Cluster = objects{}

// CallWebhooks is admission.Webhooks: the server's dispatcher, if it has
// one (Config.Webhooks).
func (o objects) CallWebhooks(ctx context.Context, a *admission.Attributes, validating bool) error {
	if o.s.cfg.Webhooks == nil {
		return nil
	}
	return o.s.cfg.Webhooks.Call(ctx, a, o, validating)
}

// EvaluatePolicies is admission.Policies: the server's evaluators of
// admission policies, if it has them (Config.Policies,
// Config.MutatingPolicies).
func (o objects) EvaluatePolicies(ctx context.Context, a *admission.Attributes, validating bool) error {
	switch {
	case validating && o.s.cfg.Policies != nil:
		return o.s.cfg.Policies.Validate(ctx, a, o)
	case !validating && o.s.cfg.MutatingPolicies != nil:
		return o.s.cfg.MutatingPolicies.Admit(ctx, a, o)
	}
	return nil
}

// Equivalents are the resource's versions that share its storage and Go
// type: the versions of a custom resource (stored once, converted by
// apiVersion alone). Kinds served at two versions with two types
// (core/v1 and events.k8s.io/v1 Events) are not converted, so not
// matched across.
func (o objects) Equivalents(gvr schema.GroupVersionResource, subresource string) []webhook.Equivalent {
	c := o.s.served.Load()
	res, ok := c.lookup(gvr.GroupVersion(), gvr.Resource)
	if !ok {
		return nil
	}
	typ := reflect.TypeOf(res.New())
	var out []webhook.Equivalent
	for _, r := range c.all {
		if r.storageName() == res.storageName() && reflect.TypeOf(r.New()) == typ {
			out = append(out, webhook.Equivalent{Resource: r.GroupVersionResource(), Kind: r.kindOf(subresource)})
		}
	}
	return out
}

// kindOf is the kind of the objects a write to subresource carries: the
// resource's own, unless the subresource declares another.
func (r *Resource) kindOf(subresource string) schema.GroupVersionKind {
	if sub, ok := r.subresource(subresource); ok && sub.Kind != "" {
		gv := r.GroupVersion
		if sub.Version != "" {
			gv = schema.GroupVersion{Group: sub.Group, Version: sub.Version}
		}
		return gv.WithKind(sub.Kind)
	}
	return r.GVK()
}

// describe fills in what webhooks are told about a write of this
// resource: the object's name and kind, the dry run, the options, and how
// a patched object is read back (decoded as a request body is, then
// defaulted, so that what a webhook added is defaulted too).
func (s *Storage) describe(ctx context.Context, a *admission.Attributes, name string) {
	a.Name, a.Kind, a.DryRun = name, s.res.GVK(), isDryRun(ctx)
	var dryRun []string
	if a.DryRun {
		dryRun = []string{metav1.DryRunAll}
	}
	switch a.Operation {
	case admission.Create:
		a.Options = &metav1.CreateOptions{TypeMeta: metav1.TypeMeta{Kind: "CreateOptions", APIVersion: "meta.k8s.io/v1"}, DryRun: dryRun}
	case admission.Update:
		a.Options = &metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{Kind: "UpdateOptions", APIVersion: "meta.k8s.io/v1"}, DryRun: dryRun}
	}
	if a.Operation == admission.Delete {
		return
	}
	a.Reread = func(data []byte) (runtime.Object, error) {
		obj, _, err := s.res.decode(data)
		if err != nil {
			return nil, err
		}
		if s.res.Default != nil {
			s.res.Default(obj)
		}
		return obj, nil
	}
}

// webhookDeleteOptions are a delete's options as webhooks are sent them.
func webhookDeleteOptions(opts *metav1.DeleteOptions, dryRun bool) *metav1.DeleteOptions {
	out := &metav1.DeleteOptions{}
	if opts != nil {
		out = opts.DeepCopy()
	}
	out.TypeMeta = metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "meta.k8s.io/v1"}
	if dryRun {
		out.DryRun = []string{metav1.DryRunAll}
	}
	return out
}

// AdmitConnect runs admission on a connect to this subresource
// (pods/attach, exec, portforward) whose options are opts, before the
// stream is proxied, as kube-apiserver's connect handler does: the
// CONNECT operation, which webhooks match as "pods/attach" and the like.
func (q *Request) AdmitConnect(opts runtime.Object) error {
	res := q.Storage.res
	a := &admission.Attributes{Operation: admission.Connect, Resource: res.GroupVersionResource(), Subresource: q.Info.Subresource,
		Namespace: q.Info.Namespace, Name: q.Info.Name, Object: opts, Kind: res.kindOf(q.Info.Subresource), Now: q.Now()}
	if err := q.srv.cfg.Admission.Admit(q.Context(), a, objects{q.srv}); err != nil {
		return err
	}
	return q.srv.cfg.Admission.Validate(q.Context(), a, objects{q.srv})
}

// withWarnings lets admission add warnings to the response w is writing,
// as "Warning: 299 - "text"" headers, before its header is written.
// Validating webhooks answer at once, so adding is locked.
func withWarnings(r *http.Request, w http.ResponseWriter) *http.Request {
	var mu sync.Mutex
	return r.WithContext(admission.WithWarnings(r.Context(), func(text string) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Add("Warning", fmt.Sprintf("299 - %q", text))
	}))
}
