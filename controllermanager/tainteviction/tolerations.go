package tainteviction

import (
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
)

// action is what happens to a pod on a node with NoExecute taints.
type action int

const (
	// stay: every taint is tolerated, none for a limited time.
	stay action = iota
	// evictNow: a taint is not tolerated, or tolerated for ≤ 0 seconds.
	evictNow
	// evictLater: every taint is tolerated, some only for tolerationSeconds.
	evictLater
)

func (a action) String() string {
	return [...]string{stay: "stay", evictNow: "evictNow", evictLater: "evictLater"}[a]
}

// verdict is decide's answer and the taints behind it, for the logs.
type verdict struct {
	action action
	// taint, for evictNow, is the first taint that is not tolerated (or,
	// with tolerated set, tolerated for ≤ 0 seconds).
	taint     corev1.Taint
	tolerated bool
	// limits, for evictLater, are the taints tolerated for a limited time.
	limits []limit
}

// limit is a taint the pod tolerates for seconds only.
type limit struct {
	taint   corev1.Taint
	seconds int64
}

// noExecuteTaints keeps the taints that evict; NoSchedule and
// PreferNoSchedule only concern the scheduler.
func noExecuteTaints(taints []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range taints {
		if t.Effect == corev1.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

// decide applies the rule of the package doc to a node's NoExecute taints
// and a pod's tolerations. For each taint only the first toleration that
// tolerates it counts, as in Kubernetes (GetMatchingTolerations): a later,
// more generous toleration does not extend it.
//
// Example, a pod with a toleration like the seed's demo7-pod.yaml
//
//	{key: key1, operator: Equal, value: value1, effect: NoExecute, tolerationSeconds: 30}
//
// on a node tainted key1=value1:NoExecute → evictLater, limit 30s;
// on a node tainted key1=value2:NoExecute → evictNow: the value differs;
// on a node tainted key1=value1:NoSchedule only → stay: noExecuteTaints leaves no taint to decide on.
func decide(taints []corev1.Taint, tolerations []corev1.Toleration) verdict {
	var limits []limit
	for _, taint := range taints {
		t := firstToleration(tolerations, &taint)
		switch {
		case t == nil:
			return verdict{action: evictNow, taint: taint}
		case t.TolerationSeconds == nil:
			// tolerated for ever
		case *t.TolerationSeconds <= 0:
			// The API documents zero and negative values as "evict now".
			return verdict{action: evictNow, taint: taint, tolerated: true}
		default:
			limits = append(limits, limit{taint: taint, seconds: *t.TolerationSeconds})
		}
	}
	if len(limits) == 0 {
		return verdict{action: stay}
	}
	return verdict{action: evictLater, limits: limits}
}

// firstToleration returns the first toleration that tolerates taint, or nil.
// The matching is k8s.io/api's own, the one Kubernetes' scheduler and taint
// eviction controller share: effect (empty matches all), key (empty with
// Exists matches all), then Equal compares the value and Exists does not.
// The numeric operators Lt and Gt need the alpha feature gate
// TaintTolerationComparisonOperators, off by default: here they tolerate
// nothing, so the logger, which only reports their unparsable values, is
// never used.
func firstToleration(tolerations []corev1.Toleration, taint *corev1.Taint) *corev1.Toleration {
	for i := range tolerations {
		if tolerations[i].ToleratesTaint(logr.Discard(), taint, false) {
			return &tolerations[i]
		}
	}
	return nil
}

// deadline is when the pod must go: each limited taint's countdown runs
// from when the taint was first seen (seen, by taintID) for its
// tolerationSeconds, and the first to run out decides. With every taint
// seen at the same instant, the minimum tolerationSeconds wins:
//
//	seen 10:00:00: check=mycheck:NoExecute for 60s, other=x:NoExecute for 30s → 10:00:30, by other=x:NoExecute
func deadline(limits []limit, seen map[string]time.Time) (time.Time, limit) {
	var at time.Time
	var by limit
	for i, l := range limits {
		t := seen[taintID(l.taint)].Add(time.Duration(l.seconds) * time.Second)
		if i == 0 || t.Before(at) {
			at, by = t, l
		}
	}
	return at, by
}

// taintID names a taint as kubectl taint writes it: key=value:effect.
func taintID(t corev1.Taint) string { return t.ToString() }
