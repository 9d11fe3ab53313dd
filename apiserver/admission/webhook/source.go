package webhook

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// hook is one webhook of a configuration, ready to match and call: its
// selectors parsed and its match conditions compiled once, when the
// configuration is stored, not on every request.
type hook struct {
	// uid tells apart webhooks of one name in different configurations
	// (ten configurations may each have "adding-configmap-data.k8s.io"),
	// as Kubernetes' "<configuration>/<webhook>/<index>".
	uid      string
	config   string
	name     string
	mutating bool

	rules          []admissionregistrationv1.RuleWithOperations
	equivalent     bool // matchPolicy Equivalent: also match the resource's other versions
	failOpen       bool // failurePolicy Ignore: a webhook that cannot be called admits
	sideEffects    admissionregistrationv1.SideEffectClass
	timeout        time.Duration
	clientConfig   admissionregistrationv1.WebhookClientConfig
	reviewVersions []string
	reinvoke       bool // reinvocationPolicy IfNeeded

	namespaceSelector, objectSelector labels.Selector
	selectorErr                       error // a stored selector that does not parse fails every request it is asked about
	conditions                        *conditions
}

// defaultTimeout is the v1 default of timeoutSeconds, for a stored
// configuration that somehow lacks it.
const defaultTimeout = 10 * time.Second

func newHook(config string, index int, name string, mutating bool, rules []admissionregistrationv1.RuleWithOperations,
	failure *admissionregistrationv1.FailurePolicyType, match *admissionregistrationv1.MatchPolicyType,
	sideEffects *admissionregistrationv1.SideEffectClass, timeout *int32, cc admissionregistrationv1.WebhookClientConfig,
	versions []string, ns, obj *metav1.LabelSelector, mcs []admissionregistrationv1.MatchCondition) *hook {
	h := &hook{uid: fmt.Sprintf("%s/%s/%d", config, name, index), config: config, name: name, mutating: mutating,
		rules: rules, clientConfig: cc, reviewVersions: versions, timeout: defaultTimeout,
		equivalent: match == nil || *match == admissionregistrationv1.Equivalent,
		failOpen:   failure != nil && *failure == admissionregistrationv1.Ignore}
	if sideEffects != nil {
		h.sideEffects = *sideEffects
	}
	if timeout != nil {
		h.timeout = time.Duration(*timeout) * time.Second
	}
	var err error
	if h.namespaceSelector, err = selector(ns); err != nil {
		h.selectorErr = err
	}
	if h.objectSelector, err = selector(obj); err != nil {
		h.selectorErr = err
	}
	h.conditions = compileConditions(mcs, failure)
	return h
}

// selector parses a label selector; nil selects everything, as the
// defaulted {} does.
func selector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(s)
}

func hooksOf(obj runtime.Object) (string, []*hook) {
	switch c := obj.(type) {
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		hooks := make([]*hook, len(c.Webhooks))
		for i, w := range c.Webhooks {
			hooks[i] = newHook(c.Name, i, w.Name, true, w.Rules, w.FailurePolicy, w.MatchPolicy, w.SideEffects, w.TimeoutSeconds,
				w.ClientConfig, w.AdmissionReviewVersions, w.NamespaceSelector, w.ObjectSelector, w.MatchConditions)
			hooks[i].reinvoke = w.ReinvocationPolicy != nil && *w.ReinvocationPolicy == admissionregistrationv1.IfNeededReinvocationPolicy
		}
		return c.Name, hooks
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		hooks := make([]*hook, len(c.Webhooks))
		for i, w := range c.Webhooks {
			hooks[i] = newHook(c.Name, i, w.Name, false, w.Rules, w.FailurePolicy, w.MatchPolicy, w.SideEffects, w.TimeoutSeconds,
				w.ClientConfig, w.AdmissionReviewVersions, w.NamespaceSelector, w.ObjectSelector, w.MatchConditions)
		}
		return c.Name, hooks
	}
	return "", nil
}

// source is the webhooks of one kind of configuration, kept current by
// the API server (it is an apiserver.Follower of
// mutatingwebhookconfigurations or validatingwebhookconfigurations).
// Requests read the list without a lock: each change builds a new one
// and swaps it in.
type source struct {
	mu      sync.Mutex         // orders Replace and Update, which the server calls from one goroutine anyway
	configs map[string][]*hook // by configuration name
	hooks   atomic.Pointer[[]*hook]
}

func newSource() *source {
	s := &source{configs: map[string][]*hook{}}
	s.hooks.Store(&[]*hook{})
	return s
}

// Replace is every configuration there is.
func (s *source) Replace(objs []runtime.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.configs = map[string][]*hook{}
	for _, obj := range objs {
		if name, hooks := hooksOf(obj); name != "" {
			s.configs[name] = hooks
		}
	}
	s.publish()
}

// Update is one configuration created, changed (obj) or deleted (obj nil).
func (s *source) Update(obj, prev runtime.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if obj == nil {
		name, _ := hooksOf(prev)
		delete(s.configs, name)
	} else if name, hooks := hooksOf(obj); name != "" {
		s.configs[name] = hooks
	}
	s.publish()
}

// publish swaps in the webhooks of every configuration, configurations
// in name order and each one's webhooks in its order: the order the
// mutating webhooks are called in, as Kubernetes sorts them.
func (s *source) publish() {
	names := make([]string, 0, len(s.configs))
	for name := range s.configs {
		names = append(names, name)
	}
	sort.Strings(names)
	var all []*hook
	for _, name := range names {
		all = append(all, s.configs[name]...)
	}
	s.hooks.Store(&all)
}

// list is the webhooks now; shared, never modified.
func (s *source) list() []*hook { return *s.hooks.Load() }
