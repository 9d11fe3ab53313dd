package token

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
)

// Manager is the kubelet's token manager (pkg/kubelet/token): the
// service-account tokens it asked the API server for (TokenRequest,
// serviceaccounts/<name>/token), one per pod and projected
// serviceAccountToken source, bound to the pod, so that deleting the pod
// revokes them. They are cached by what was asked, so a pod's syncs do not
// ask again; a token is asked anew once 80% of its life has passed, or
// when it is a day old, whichever comes first:
//
//	expirationSeconds 3607 (the ServiceAccount admission plugin's):
//	  asked at 10:00:00, renewed after 10:48:05 (20% = 721 s before 11:00:07)
//	expirationSeconds 172800 (two days): renewed after a day
//
// The volume resync (package kubelet's resyncVolumes) brings renewals
// to the pods' files within --sync-frequency, as the kubelet's periodic
// pod sync does. A renewal that fails keeps the old token while it is
// still good.
type Manager struct {
	// request asks the API server for a token: POST
	// serviceaccounts/<name>/token in namespace.
	request Requester
	clock   clock.PassiveClock
	log     *slog.Logger

	mu     sync.Mutex
	tokens map[string]*authenticationv1.TokenRequest // by tokenKey: the answers, with the spec asked for
}

// maxTokenTTL is the oldest a cached token may be, Kubernetes' maxTTL:
// even a token good for a year is renewed daily.
const maxTokenTTL = 24 * time.Hour

// defaultTokenSeconds is a projection's expirationSeconds when the pod
// leaves it out (Kubernetes' defaulting: an hour).
const defaultTokenSeconds = 60 * 60

// Requester asks the API server for a token: POST
// serviceaccounts/<name>/token in namespace.
type Requester func(ctx context.Context, namespace, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)

// NewManager returns a token manager asking through c.
func NewManager(c *client.Client, clk clock.PassiveClock, log *slog.Logger) *Manager {
	request := func(ctx context.Context, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
		out := &authenticationv1.TokenRequest{}
		return out, c.Do(ctx, "POST", client.ServiceAccounts.Path(ns, name, "token"), tr, out)
	}
	return &Manager{request: request, clock: clk, log: log, tokens: map[string]*authenticationv1.TokenRequest{}}
}

// SetRequester replaces how tokens are asked for (a fleet's asks as each
// pod's node), before the first is.
func (m *Manager) SetRequester(r Requester) { m.request = r }

// podTokenRequest is what the kubelet asks for a pod's projection, as the
// projected volume plugin does: the source's audience (none: the API
// server's) and expiration, bound to the pod.
func podTokenRequest(pod *corev1.Pod, src *corev1.ServiceAccountTokenProjection) *authenticationv1.TokenRequest {
	seconds := int64(defaultTokenSeconds)
	if src.ExpirationSeconds != nil {
		seconds = *src.ExpirationSeconds
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds,
		BoundObjectRef: &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}}}
	if src.Audience != "" {
		tr.Spec.Audiences = []string{src.Audience}
	}
	return tr
}

// PodToken is the token for one of pod's serviceAccountToken sources.
func (m *Manager) PodToken(ctx context.Context, pod *corev1.Pod, src *corev1.ServiceAccountTokenProjection) (string, error) {
	tr, err := m.get(ctx, pod.Namespace, pod.Spec.ServiceAccountName, podTokenRequest(pod, src))
	if err != nil {
		return "", err
	}
	return tr.Status.Token, nil
}

// get is the cached token for tr, asked for if there is none or it is due
// for renewal.
func (m *Manager) get(ctx context.Context, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	key := tokenKey(ns, name, tr)
	m.mu.Lock()
	cached := m.tokens[key]
	m.mu.Unlock()
	if cached != nil && !m.renewalDue(cached) {
		return cached, nil
	}
	fresh, err := m.request(ctx, ns, name, tr)
	switch {
	case err == nil:
	case cached != nil && m.clock.Now().Before(cached.Status.ExpirationTimestamp.Time):
		m.log.Warn("could not renew a service account token; keeping the current one", "serviceaccount", ns+"/"+name, "err", err)
		return cached, nil
	default:
		return nil, fmt.Errorf("failed to fetch token: %w", err)
	}
	// The answer may not repeat the spec; the renewal schedule needs it.
	fresh.Spec.ExpirationSeconds = tr.Spec.ExpirationSeconds
	m.mu.Lock()
	m.tokens[key] = fresh
	m.mu.Unlock()
	m.log.Debug("service account token issued", "serviceaccount", ns+"/"+name, "expires", fresh.Status.ExpirationTimestamp.Time)
	return fresh, nil
}

// renewalDue: 80% of the token's life has passed, or a day.
func (m *Manager) renewalDue(tr *authenticationv1.TokenRequest) bool {
	now := m.clock.Now()
	exp := tr.Status.ExpirationTimestamp.Time
	life := time.Duration(*tr.Spec.ExpirationSeconds) * time.Second
	issued := exp.Add(-life)
	return now.After(issued.Add(maxTokenTTL)) || now.After(exp.Add(-life/5))
}

// PodRenewalDue: one of pod's projected tokens is due for renewal, so the
// pod's volumes should be synced. A token never fetched is not: the
// pod's own sync fetches it (or retries, with its FailedMount).
func (m *Manager) PodRenewalDue(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.ServiceAccountToken == nil {
				continue
			}
			m.mu.Lock()
			tr := m.tokens[tokenKey(pod.Namespace, pod.Spec.ServiceAccountName, podTokenRequest(pod, src.ServiceAccountToken))]
			m.mu.Unlock()
			if tr != nil && m.renewalDue(tr) {
				return true
			}
		}
	}
	return false
}

// Empty: no token is cached, so none is due.
func (m *Manager) Empty() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.tokens) == 0
}

// ForgetExpired drops the tokens that are no longer good: those of pods
// gone, which nobody renews. Kubernetes' token manager does it every
// minute; the volume resync calls it.
func (m *Manager) ForgetExpired() {
	now := m.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for key, tr := range m.tokens {
		if !now.Before(tr.Status.ExpirationTimestamp.Time) {
			delete(m.tokens, key)
		}
	}
}

// tokenKey names what was asked: the service account, audiences,
// expiration and bound object.
func tokenKey(ns, name string, tr *authenticationv1.TokenRequest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s|%s|", ns, name, strings.Join(tr.Spec.Audiences, ","))
	if s := tr.Spec.ExpirationSeconds; s != nil {
		fmt.Fprintf(&b, "%d", *s)
	}
	if r := tr.Spec.BoundObjectRef; r != nil {
		fmt.Fprintf(&b, "|%s/%s/%s", r.Kind, r.Name, r.UID)
	}
	return b.String()
}
