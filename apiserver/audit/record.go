package audit

import (
	"context"
	"maps"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// record is the event of one request while it is served: the filter
// starts it, authentication, impersonation, authorization and handlers
// fill it in through the request's context.
type record struct {
	mu sync.Mutex // the handler's goroutines may annotate while the filter emits
	ev event
}

type recordKey struct{}

func withRecord(ctx context.Context, r *record) context.Context {
	return context.WithValue(ctx, recordKey{}, r)
}

// update runs f on the request's event, if the request is audited.
func update(ctx context.Context, f func(ev *event)) {
	r, ok := ctx.Value(recordKey{}).(*record)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.ev)
}

// SetUser records who sent the request (authentication).
func SetUser(ctx context.Context, u authenticationv1.UserInfo) {
	update(ctx, func(ev *event) { ev.User = u })
}

// SetImpersonatedUser records whom the sender acts as (kubectl --as).
func SetImpersonatedUser(ctx context.Context, u authenticationv1.UserInfo) {
	update(ctx, func(ev *event) { ev.ImpersonatedUser = &u })
}

// The annotations kube-apiserver's authorization filter adds.
const (
	DecisionAnnotation = "authorization.k8s.io/decision"
	ReasonAnnotation   = "authorization.k8s.io/reason"
)

// SetDecision records the authorizer's answer: "allow" or "forbid", and
// why (`RBAC: allowed by ClusterRoleBinding "cluster-admin" ...`).
func SetDecision(ctx context.Context, allowed bool, reason string) {
	decision := "forbid"
	if allowed {
		decision = "allow"
	}
	AddAnnotation(ctx, DecisionAnnotation, decision)
	AddAnnotation(ctx, ReasonAnnotation, reason)
}

// AddAnnotation adds a key to the request's event's annotations, as
// kube-apiserver's audit.AddAuditAnnotation: the first value of a key
// stays.
func AddAnnotation(ctx context.Context, key, value string) {
	update(ctx, func(ev *event) {
		if ev.Annotations == nil {
			ev.Annotations = map[string]string{}
		}
		if _, ok := ev.Annotations[key]; !ok {
			ev.Annotations[key] = value
		}
	})
}

// snapshot copies the event as it is now, at stage, for the writer.
func (r *record) snapshot(stage auditv1.Stage, fill func(ev *event)) *event {
	r.mu.Lock()
	defer r.mu.Unlock()
	fill(&r.ev)
	ev := r.ev
	ev.Stage = stage
	ev.Annotations = maps.Clone(r.ev.Annotations)
	return &ev
}
