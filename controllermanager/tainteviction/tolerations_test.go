package tainteviction

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The seed's taint: kubectl taint node node01 check=mycheck:NoExecute.
var check = corev1.Taint{Key: "check", Value: "mycheck", Effect: corev1.TaintEffectNoExecute}

func seconds(s int64) *int64 { return &s }

// The tolerations the API server's DefaultTolerationSeconds gives every pod.
var defaultTolerations = []corev1.Toleration{
	{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds(300)},
	{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds(300)},
}

func TestDecide(t *testing.T) {
	other := corev1.Taint{Key: "other", Value: "x", Effect: corev1.TaintEffectNoExecute}
	notReady := corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}
	tests := []struct {
		name        string
		taints      []corev1.Taint // all of the node's taints
		tolerations []corev1.Toleration
		want        action
		after       time.Duration // evictLater: the deadline, every taint seen at the same instant
		why         string        // the deciding taint: evictNow's, or the one whose countdown ends first
	}{
		{
			name:   "a pod with no tolerations is evicted at once from a node with a NoExecute taint",
			taints: []corev1.Taint{check},
			want:   evictNow, why: "check=mycheck:NoExecute",
		},
		{
			name:   "NoSchedule and PreferNoSchedule taints never evict a running pod",
			taints: []corev1.Taint{{Key: "check", Value: "mycheck", Effect: corev1.TaintEffectNoSchedule}, {Key: "a", Effect: corev1.TaintEffectPreferNoSchedule}},
			want:   stay,
		},
		{
			name:        "operator Equal with the taint's value and no tolerationSeconds tolerates the taint for ever",
			taints:      []corev1.Taint{check},
			tolerations: []corev1.Toleration{{Key: "check", Operator: corev1.TolerationOpEqual, Value: "mycheck", Effect: corev1.TaintEffectNoExecute}},
			want:        stay,
		},
		{
			name:        "operator Equal with another value does not tolerate the taint",
			taints:      []corev1.Taint{check},
			tolerations: []corev1.Toleration{{Key: "check", Operator: corev1.TolerationOpEqual, Value: "other", Effect: corev1.TaintEffectNoExecute}},
			want:        evictNow, why: "check=mycheck:NoExecute",
		},
		{
			name:        "an empty operator means Equal",
			taints:      []corev1.Taint{check},
			tolerations: []corev1.Toleration{{Key: "check", Value: "mycheck"}},
			want:        stay,
		},
		{
			name:        "operator Exists tolerates the key whatever its value",
			taints:      []corev1.Taint{check},
			tolerations: []corev1.Toleration{{Key: "check", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
			want:        stay,
		},
		{
			name:        "an empty key with operator Exists tolerates every taint",
			taints:      []corev1.Taint{check, other, notReady},
			tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			want:        stay,
		},
		{
			name:        "an empty effect matches every effect, NoExecute included",
			taints:      []corev1.Taint{check},
			tolerations: []corev1.Toleration{{Key: "check", Operator: corev1.TolerationOpExists}},
			want:        stay,
		},
		{
			name:        "a toleration for the NoSchedule effect does not tolerate the NoExecute taint of the same key",
			taints:      []corev1.Taint{check},
			tolerations: []corev1.Toleration{{Key: "check", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			want:        evictNow, why: "check=mycheck:NoExecute",
		},
		{
			name:   "a pod tolerating the taint for 30 seconds is evicted 30 seconds after it appeared (the seed's demo7-pod.yaml)",
			taints: []corev1.Taint{{Key: "key1", Value: "value1", Effect: corev1.TaintEffectNoExecute}},
			tolerations: []corev1.Toleration{{Key: "key1", Operator: corev1.TolerationOpEqual, Value: "value1",
				Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds(30)}},
			want: evictLater, after: 30 * time.Second, why: "key1=value1:NoExecute",
		},
		{
			name:   "with several taints tolerated for a while, the minimum tolerationSeconds wins",
			taints: []corev1.Taint{check, other},
			tolerations: []corev1.Toleration{
				{Key: "check", Operator: corev1.TolerationOpExists, TolerationSeconds: seconds(60), Effect: corev1.TaintEffectNoExecute},
				{Key: "other", Operator: corev1.TolerationOpExists, TolerationSeconds: seconds(30), Effect: corev1.TaintEffectNoExecute},
			},
			want: evictLater, after: 30 * time.Second, why: "other=x:NoExecute",
		},
		{
			name:   "a taint tolerated for ever does not cancel another taint's tolerationSeconds",
			taints: []corev1.Taint{check, other},
			tolerations: []corev1.Toleration{
				{Key: "check", Operator: corev1.TolerationOpExists},
				{Key: "other", Operator: corev1.TolerationOpExists, TolerationSeconds: seconds(60), Effect: corev1.TaintEffectNoExecute},
			},
			want: evictLater, after: 60 * time.Second, why: "other=x:NoExecute",
		},
		{
			name:   "every NoExecute taint must be tolerated: one untolerated taint evicts at once",
			taints: []corev1.Taint{check, other},
			tolerations: []corev1.Toleration{
				{Key: "check", Operator: corev1.TolerationOpExists, TolerationSeconds: seconds(60), Effect: corev1.TaintEffectNoExecute},
			},
			want: evictNow, why: "other=x:NoExecute",
		},
		{
			name:        "a tolerationSeconds of zero means evict now",
			taints:      []corev1.Taint{check},
			tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds(0)}},
			want:        evictNow, why: "check=mycheck:NoExecute",
		},
		{
			name:        "a negative tolerationSeconds means evict now",
			taints:      []corev1.Taint{check},
			tolerations: []corev1.Toleration{{Key: "check", Operator: corev1.TolerationOpExists, TolerationSeconds: seconds(-5), Effect: corev1.TaintEffectNoExecute}},
			want:        evictNow, why: "check=mycheck:NoExecute",
		},
		{
			name:   "only the first toleration that tolerates a taint counts, as in Kubernetes: a later one without a limit does not extend it",
			taints: []corev1.Taint{check},
			tolerations: []corev1.Toleration{
				{Key: "check", Operator: corev1.TolerationOpExists, TolerationSeconds: seconds(60), Effect: corev1.TaintEffectNoExecute},
				{Operator: corev1.TolerationOpExists},
			},
			want: evictLater, after: 60 * time.Second, why: "check=mycheck:NoExecute",
		},
		{
			name:        "the API server's default tolerations keep a pod 300s on a not-ready node",
			taints:      []corev1.Taint{notReady},
			tolerations: defaultTolerations,
			want:        evictLater, after: 300 * time.Second, why: "node.kubernetes.io/not-ready:NoExecute",
		},
		{
			name:        "the API server's default tolerations do not tolerate anybody else's taint",
			taints:      []corev1.Taint{check},
			tolerations: defaultTolerations,
			want:        evictNow, why: "check=mycheck:NoExecute",
		},
	}
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := decide(noExecuteTaints(tt.taints), tt.tolerations)
			if v.action != tt.want {
				t.Fatalf("action = %v, want %v (verdict %+v)", v.action, tt.want, v)
			}
			switch v.action {
			case evictNow:
				if got := taintID(v.taint); got != tt.why {
					t.Errorf("evicted because of %s, want %s", got, tt.why)
				}
			case evictLater:
				seen := map[string]time.Time{}
				for _, l := range v.limits {
					seen[taintID(l.taint)] = t0
				}
				at, by := deadline(v.limits, seen)
				if got := at.Sub(t0); got != tt.after {
					t.Errorf("evicted after %v, want %v", got, tt.after)
				}
				if got := taintID(by.taint); got != tt.why {
					t.Errorf("deadline set by %s, want %s", got, tt.why)
				}
			}
		})
	}
}

func TestDeadlineCountsEachTaintFromWhenItWasSeen(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	other := corev1.Taint{Key: "other", Value: "x", Effect: corev1.TaintEffectNoExecute}
	limits := []limit{{taint: check, seconds: 60}, {taint: other, seconds: 20}}
	// check appeared at 10:00:00 (tolerated 60s), other at 10:00:50 (20s):
	// check's countdown ends first, at 10:01:00, although other's
	// tolerationSeconds is smaller.
	at, by := deadline(limits, map[string]time.Time{taintID(check): t0, taintID(other): t0.Add(50 * time.Second)})
	if want := t0.Add(60 * time.Second); !at.Equal(want) || taintID(by.taint) != taintID(check) {
		t.Errorf("deadline %v set by %s, want %v set by %s", at, taintID(by.taint), want, taintID(check))
	}
}
