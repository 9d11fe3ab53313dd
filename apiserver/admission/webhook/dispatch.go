package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"sync"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/mkube/mkube/apiserver/admission"
	"github.com/mkube/mkube/apiserver/admission/predicates"
	"github.com/mkube/mkube/apiserver/authentication"
	"github.com/mkube/mkube/apiserver/webhookclient"
)

// Cluster is the API server as the dispatcher reads it.
type Cluster = predicates.Cluster

// Equivalent is one version of a resource.
type Equivalent = predicates.Equivalent

// Follower is what the API server feeds a configuration kind into
// (apiserver.Follower).
type Follower interface {
	Replace(objs []runtime.Object)
	Update(obj, prev runtime.Object)
}

// Dispatcher calls the webhooks of the configurations it is fed.
type Dispatcher struct {
	mutating, validating *source
	clients              webhookclient.Clients
	log                  *slog.Logger
}

// New is a dispatcher without webhooks; feed it with
// Server.Follow(ctx, mutatingwebhookconfigurations, d.Mutating()) and the
// same for validating ones.
func New(log *slog.Logger) *Dispatcher {
	if log == nil {
		log = slog.Default()
	}
	return &Dispatcher{mutating: newSource(), validating: newSource(), log: log}
}

// Mutating is where the MutatingWebhookConfigurations go.
func (d *Dispatcher) Mutating() Follower { return d.mutating }

// Validating is where the ValidatingWebhookConfigurations go.
func (d *Dispatcher) Validating() Follower { return d.validating }

// exemptKinds are never sent to a webhook: a webhook that refuses
// everything could otherwise not be deleted, nor a policy that does.
var exemptKinds = sets.New("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "ValidatingAdmissionPolicy",
	"ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding")

// Call asks the validating webhooks, or the mutating ones, about a.
func (d *Dispatcher) Call(ctx context.Context, a *admission.Attributes, c Cluster, validating bool) error {
	if a.Kind.Group == admissionregistrationv1.GroupName && exemptKinds.Has(a.Kind.Kind) {
		return nil
	}
	// A webhook decodes the objects by their apiVersion and kind, which
	// the API server always sends; stamp them once, before webhooks are
	// called at once.
	for _, o := range []runtime.Object{a.Object, a.OldObject} {
		if o != nil && o.GetObjectKind().GroupVersionKind().Empty() && a.Kind.Kind != "" {
			o.GetObjectKind().SetGroupVersionKind(a.Kind)
		}
	}
	user, _ := authentication.UserFrom(ctx)
	r := &request{a: a, cluster: c, user: user, ns: &predicates.NamespaceReader{Cluster: c, A: a}}
	if validating {
		return d.validate(ctx, r, d.validating.list())
	}
	return d.mutate(ctx, r, d.mutating.list())
}

// mutate calls the matching mutating webhooks one after the other, each
// on the object as the ones before left it. A webhook with
// reinvocationPolicy IfNeeded that a later webhook's change may have
// invalidated is called once more, after the others, as Kubernetes
// reinvokes it (only once: a change in that round reinvokes nothing).
func (d *Dispatcher) mutate(ctx context.Context, r *request, hooks []*hook) error {
	invoked := sets.New[string]()  // reinvocable webhooks called since the last change
	reinvoke := sets.New[string]() // those a later change requires to run again
	for round := 0; round < 2; round++ {
		for _, h := range hooks {
			if round == 1 && !reinvoke.Has(h.uid) {
				continue
			}
			inv, err := shouldCall(ctx, h, r)
			if err != nil {
				return err
			}
			if inv == nil {
				continue
			}
			changed, err := d.callMutating(ctx, r, inv)
			if changed && round == 0 {
				reinvoke = reinvoke.Union(invoked)
				invoked = sets.New[string]()
			}
			if h.reinvoke {
				invoked.Insert(h.uid)
			}
			if err = d.outcome(ctx, h, err); err != nil {
				return err
			}
		}
		if reinvoke.Len() == 0 {
			return nil
		}
	}
	return nil
}

// validate calls the matching validating webhooks all at once and
// returns the first refusal, in the webhooks' order.
func (d *Dispatcher) validate(ctx context.Context, r *request, hooks []*hook) error {
	var invs []*invocation
	for _, h := range hooks {
		inv, err := shouldCall(ctx, h, r)
		if err != nil {
			return err
		}
		if inv != nil {
			invs = append(invs, inv)
		}
	}
	if len(invs) == 0 {
		return nil
	}
	if ctx.Err() != nil {
		return apierrors.NewTimeoutError("request did not complete within requested timeout", 0)
	}
	errs := make([]error, len(invs))
	var wg sync.WaitGroup
	for i, inv := range invs {
		wg.Add(1)
		go func() { // one per webhook; all end before validate returns
			defer wg.Done()
			errs[i] = d.outcome(ctx, inv.hook, d.callValidating(ctx, r, inv))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// callError is a webhook that could not be called, or whose answer
// made no sense: Kubernetes' ErrCallingWebhook, which the webhook's
// failurePolicy decides about.
type callError struct {
	webhook string
	err     error
}

func (e *callError) Error() string {
	return fmt.Sprintf("failed calling webhook %q: %v", e.webhook, e.err)
}

// outcome applies h's failurePolicy to the error of a call: a webhook
// that could not be called fails the request with an Internal error
// (500), unless its failurePolicy is Ignore; a refusal stays one.
func (d *Dispatcher) outcome(ctx context.Context, h *hook, err error) error {
	var ce *callError
	if !errors.As(err, &ce) {
		return err
	}
	if !h.failOpen {
		d.log.Warn("admission webhook failed, failing closed", "webhook", h.name, "configuration", h.config, "err", ce.err)
		return apierrors.NewInternalError(ce)
	}
	d.log.Warn("admission webhook failed, failing open (failurePolicy Ignore)", "webhook", h.name, "configuration", h.config, "err", ce.err)
	if ctx.Err() != nil { // the request's own time is up, not only the webhook's
		return apierrors.NewTimeoutError("request did not complete within requested timeout", 0)
	}
	return nil
}

// call sends inv's webhook the review of the request and returns its
// answer; a *callError if there is none to go by.
func (d *Dispatcher) call(ctx context.Context, r *request, inv *invocation) (*answer, runtime.Object, error) {
	h := inv.hook
	// A dry run writes nothing; a webhook with side effects would, so it
	// is not called and the dry run fails.
	if r.a.DryRun && h.sideEffects != admissionregistrationv1.SideEffectClassNone && h.sideEffects != admissionregistrationv1.SideEffectClassNoneOnDryRun {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("admission webhook %q does not support dry run", h.name))
	}
	version, err := reviewVersion(h.reviewVersions)
	if err != nil {
		return nil, nil, &callError{h.name, fmt.Errorf("could not create admission objects: %w", err)}
	}
	obj, old, err := r.versioned(inv.kind)
	if err != nil {
		return nil, nil, err
	}
	uid := uuid.NewUUID()
	body, err := json.Marshal(newReview(uid, version, r, inv, obj, old))
	if err != nil {
		return nil, nil, &callError{h.name, fmt.Errorf("could not create admission objects: %w", err)}
	}
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	data, err := d.clients.Post(ctx, h.clientConfig, r.cluster, body)
	if err != nil {
		return nil, nil, &callError{h.name, fmt.Errorf("failed to call webhook: %w", err)}
	}
	ans, err := readAnswer(data, uid, version, h.mutating)
	if err != nil {
		return nil, nil, &callError{h.name, fmt.Errorf("received invalid webhook response: %w", err)}
	}
	for _, w := range ans.warnings {
		admission.Warn(ctx, w)
	}
	d.log.Info("admission webhook answered", "webhook", h.name, "configuration", h.config, "operation", r.a.Operation,
		"resource", inv.resource.String(), "object", r.namespace()+"/"+r.a.Name, "allowed", ans.allowed, "patched", len(ans.patch) > 0)
	if !ans.allowed {
		return nil, nil, toStatusError(h.name, ans.result)
	}
	return ans, obj, nil
}

func (d *Dispatcher) callValidating(ctx context.Context, r *request, inv *invocation) error {
	_, _, err := d.call(ctx, r, inv)
	return err
}

// callMutating calls a mutating webhook and applies its patch: the
// patched JSON is read back as the kind's own (decoded, pruned,
// defaulted: Attributes.Reread) and replaces the request's object in
// place. changed reports whether the object is now different.
func (d *Dispatcher) callMutating(ctx context.Context, r *request, inv *invocation) (changed bool, err error) {
	h := inv.hook
	ans, obj, err := d.call(ctx, r, inv)
	if err != nil || len(ans.patch) == 0 {
		return false, err
	}
	patch, err := jsonpatch.DecodePatch(ans.patch)
	if err != nil {
		return false, &callError{h.name, fmt.Errorf("received undecodable patch in webhook response: %w", err)}
	}
	if len(patch) == 0 {
		return false, nil
	}
	if obj == nil || r.a.Reread == nil {
		return false, apierrors.NewInternalError(fmt.Errorf("admission webhook %q attempted to modify the object, which is not supported for this operation", h.name))
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	if data, err = patch.Apply(data); err != nil {
		return false, apierrors.NewInternalError(err)
	}
	if inv.kind != r.a.Kind {
		if data, err = setAPIVersion(data, r.a.Kind); err != nil {
			return false, apierrors.NewInternalError(err)
		}
	}
	next, err := r.a.Reread(data)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	changed = !apiequality.Semantic.DeepEqual(r.a.Object, next)
	if err := replaceInPlace(r.a.Object, next); err != nil {
		return false, apierrors.NewInternalError(err)
	}
	return changed, nil
}

// setAPIVersion turns a patched object of an equivalent version back into
// the request's version.
func setAPIVersion(data []byte, kind schema.GroupVersionKind) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	m["apiVersion"] = kind.GroupVersion().String()
	return json.Marshal(m)
}

// replaceInPlace makes dst (which the API server's storage holds) what
// src is: both are pointers to the same type.
func replaceInPlace(dst, src runtime.Object) error {
	dv, sv := reflect.ValueOf(dst), reflect.ValueOf(src)
	if dv.Type() != sv.Type() || dv.Kind() != reflect.Pointer {
		return fmt.Errorf("a patched %T cannot replace a %T", src, dst)
	}
	dv.Elem().Set(sv.Elem())
	return nil
}

// toStatusError is a refusal in Kubernetes' words (ToStatusErr): the
// webhook's Status, its message prefixed with who refused, at least a 400
// and a Failure.
//
//	admission webhook "deny-unwanted-configmap-data.k8s.io" denied the request: the configmap contains unwanted key and value
func toStatusError(webhook string, result *metav1.Status) *apierrors.StatusError {
	deniedBy := fmt.Sprintf("admission webhook %q denied the request", webhook)
	st := metav1.Status{Status: metav1.StatusFailure}
	if result != nil {
		st = *result.DeepCopy()
	}
	if st.Code < http.StatusBadRequest {
		st.Code = http.StatusBadRequest
	}
	if st.Status == "" || st.Status == metav1.StatusSuccess {
		st.Status = metav1.StatusFailure
	}
	switch {
	case st.Message != "":
		st.Message = deniedBy + ": " + st.Message
	case st.Reason != "":
		st.Message = deniedBy + ": " + string(st.Reason)
	default:
		st.Message = deniedBy + " without explanation"
	}
	return &apierrors.StatusError{ErrStatus: st}
}
