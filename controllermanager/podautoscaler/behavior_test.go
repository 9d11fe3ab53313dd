package podautoscaler

import (
	"log/slog"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

func testController(clk *clocktesting.FakeClock) *Controller {
	return &Controller{history: newHistory(clk, DefaultDownscaleStabilization), clock: clk, log: slog.New(slog.DiscardHandler)}
}

func condition(hpa *autoscalingv2.HorizontalPodAutoscaler, typ autoscalingv2.HorizontalPodAutoscalerConditionType) autoscalingv2.HorizontalPodAutoscalerCondition {
	for _, c := range hpa.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return autoscalingv2.HorizontalPodAutoscalerCondition{}
}

func rules(window int32, selectPolicy autoscalingv2.ScalingPolicySelect, policies ...autoscalingv2.HPAScalingPolicy) *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To(window), SelectPolicy: ptr.To(selectPolicy), Policies: policies}
}

func pods(n, period int32) autoscalingv2.HPAScalingPolicy {
	return autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PodsScalingPolicy, Value: n, PeriodSeconds: period}
}

func percent(n, period int32) autoscalingv2.HPAScalingPolicy {
	return autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PercentScalingPolicy, Value: n, PeriodSeconds: period}
}

// step is one sync: after waiting `after`, the metrics propose `proposed`
// for a target at `current`; the normalized count and the conditions'
// reasons are checked, and a rescale is remembered as the controller
// does.
type step struct {
	after          time.Duration
	current        int32
	proposed       int32
	want           int32
	wantAbleReason string
	wantLimited    string
}

func TestBehavior(t *testing.T) {
	const max, min = autoscalingv2.MaxChangePolicySelect, autoscalingv2.MinChangePolicySelect
	tests := []struct {
		name        string
		behavior    *autoscalingv2.HorizontalPodAutoscalerBehavior // nil: no behavior
		minReplicas int32
		maxReplicas int32
		steps       []step
	}{
		{name: "without a behavior: up to twice the replicas, or 4", minReplicas: 1, maxReplicas: 100, steps: []step{
			{current: 3, proposed: 20, want: 6, wantAbleReason: "ReadyForNewScale", wantLimited: "ScaleUpLimit"},
			{current: 1, proposed: 20, want: 4, wantAbleReason: "ReadyForNewScale", wantLimited: "ScaleUpLimit"},
		}},
		{name: "without a behavior: down only after the 5 minute window", minReplicas: 1, maxReplicas: 100, steps: []step{
			{current: 10, proposed: 10, want: 10, wantAbleReason: "ReadyForNewScale", wantLimited: "DesiredWithinRange"},
			{after: time.Minute, current: 10, proposed: 2, want: 10, wantAbleReason: "ScaleDownStabilized", wantLimited: "DesiredWithinRange"},
			{after: 4*time.Minute + time.Second, current: 10, proposed: 2, want: 2, wantAbleReason: "ReadyForNewScale", wantLimited: "DesiredWithinRange"},
		}},
		{name: "without a behavior: min and max", minReplicas: 2, maxReplicas: 5, steps: []step{
			{current: 3, proposed: 1, want: 3, wantAbleReason: "ScaleDownStabilized", wantLimited: "DesiredWithinRange"}, // the first sync's recommendation is the current count
			{after: 6 * time.Minute, current: 3, proposed: 1, want: 2, wantAbleReason: "ReadyForNewScale", wantLimited: "TooFewReplicas"},
			{current: 4, proposed: 9, want: 5, wantAbleReason: "ReadyForNewScale", wantLimited: "TooManyReplicas"},
		}},
		{name: "default scale-up rules: the larger of 4 pods and 100% per 15 s", behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{},
			minReplicas: 1, maxReplicas: 100, steps: []step{
				{current: 3, proposed: 20, want: 7, wantAbleReason: "ReadyForNewScale", wantLimited: "ScaleUpLimit"},
				// 5 s later the period still starts at 3 pods: 3 + 4 = 7 at most.
				{after: 5 * time.Second, current: 7, proposed: 20, want: 7, wantAbleReason: "ReadyForNewScale", wantLimited: "ScaleUpLimit"},
				{after: 11 * time.Second, current: 7, proposed: 20, want: 14, wantAbleReason: "ReadyForNewScale", wantLimited: "ScaleUpLimit"},
				{after: 15 * time.Second, current: 14, proposed: 20, want: 20, wantAbleReason: "ReadyForNewScale", wantLimited: "DesiredWithinRange"},
			}},
		{name: "selectPolicy Min takes the smaller change", behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
			ScaleUp: rules(0, min, pods(4, 60), percent(100, 60))}, minReplicas: 1, maxReplicas: 100, steps: []step{
			{current: 10, proposed: 50, want: 14, wantAbleReason: "ReadyForNewScale", wantLimited: "ScaleUpLimit"},
		}},
		{name: "selectPolicy Disabled turns scaling up off", behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
			ScaleUp: rules(0, autoscalingv2.DisabledPolicySelect, pods(4, 60))}, minReplicas: 1, maxReplicas: 100, steps: []step{
			{current: 10, proposed: 50, want: 10, wantAbleReason: "ReadyForNewScale", wantLimited: "ScaleUpLimit"},
		}},
		{name: "a scale-down policy of 50% per minute, counted from the period's start", behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
			ScaleDown: rules(0, max, percent(50, 60))}, minReplicas: 1, maxReplicas: 100, steps: []step{
			{current: 10, proposed: 2, want: 5, wantAbleReason: "ReadyForNewScale", wantLimited: "ScaleDownLimit"},
			{after: 30 * time.Second, current: 5, proposed: 2, want: 5, wantAbleReason: "ReadyForNewScale", wantLimited: "ScaleDownLimit"},
			// A minute on, 50% of 5 is 2.5, truncated as upstream does.
			{after: 31 * time.Second, current: 5, proposed: 2, want: 2, wantAbleReason: "ReadyForNewScale", wantLimited: "DesiredWithinRange"},
		}},
		{name: "the scale-down window: the highest recent recommendation", behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
			ScaleDown: rules(60, max, percent(100, 15))}, minReplicas: 1, maxReplicas: 100, steps: []step{
			{current: 8, proposed: 8, want: 8, wantAbleReason: "ReadyForNewScale", wantLimited: "DesiredWithinRange"},
			{after: 20 * time.Second, current: 8, proposed: 6, want: 8, wantAbleReason: "ScaleDownStabilized", wantLimited: "DesiredWithinRange"},
			{after: 20 * time.Second, current: 8, proposed: 3, want: 8, wantAbleReason: "ScaleDownStabilized", wantLimited: "DesiredWithinRange"},
			{after: 21 * time.Second, current: 8, proposed: 3, want: 6, wantAbleReason: "ScaleDownStabilized", wantLimited: "DesiredWithinRange"},
			{after: 20 * time.Second, current: 6, proposed: 3, want: 3, wantAbleReason: "ReadyForNewScale", wantLimited: "DesiredWithinRange"},
		}},
		{name: "the scale-up window: the lowest recent recommendation", behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
			ScaleUp: rules(60, max, percent(100, 15))}, minReplicas: 1, maxReplicas: 100, steps: []step{
			{current: 4, proposed: 4, want: 4, wantAbleReason: "ReadyForNewScale", wantLimited: "DesiredWithinRange"},
			{after: 30 * time.Second, current: 4, proposed: 6, want: 4, wantAbleReason: "ScaleUpStabilized", wantLimited: "DesiredWithinRange"},
			{after: 31 * time.Second, current: 4, proposed: 7, want: 6, wantAbleReason: "ScaleUpStabilized", wantLimited: "DesiredWithinRange"},
		}},
		{name: "a behavior without a scale-down window takes the flag's", behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
			ScaleDown: &autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{percent(100, 15)}}}, minReplicas: 1, maxReplicas: 100, steps: []step{
			{current: 5, proposed: 5, want: 5, wantAbleReason: "ReadyForNewScale", wantLimited: "DesiredWithinRange"},
			{after: 299 * time.Second, current: 5, proposed: 1, want: 5, wantAbleReason: "ScaleDownStabilized", wantLimited: "DesiredWithinRange"},
			{after: 2 * time.Second, current: 5, proposed: 1, want: 1, wantAbleReason: "ReadyForNewScale", wantLimited: "DesiredWithinRange"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(calcNow)
			c := testController(clk)
			hpa := &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				MinReplicas: ptr.To(tt.minReplicas), MaxReplicas: tt.maxReplicas, Behavior: tt.behavior}}
			for i, s := range tt.steps {
				clk.Step(s.after)
				c.history.recordInitialRecommendation("ns/hpa", s.current)
				var got int32
				if tt.behavior == nil {
					got = c.normalizeDesiredReplicas(hpa, "ns/hpa", s.current, s.proposed, tt.minReplicas)
				} else {
					got = c.normalizeDesiredReplicasWithBehaviors(hpa, "ns/hpa", s.current, s.proposed, tt.minReplicas)
				}
				able, limited := condition(hpa, autoscalingv2.AbleToScale), condition(hpa, autoscalingv2.ScalingLimited)
				if got != s.want || able.Reason != s.wantAbleReason || limited.Reason != s.wantLimited {
					t.Fatalf("step %d: %d → %d, AbleToScale %s, ScalingLimited %s; want %d, %s, %s",
						i, s.current, got, able.Reason, limited.Reason, s.want, s.wantAbleReason, s.wantLimited)
				}
				if wantLimited := s.wantLimited != "DesiredWithinRange"; (limited.Status == corev1.ConditionTrue) != wantLimited {
					t.Fatalf("step %d: ScalingLimited is %s", i, limited.Status)
				}
				if got != s.current {
					c.history.storeScaleEvent(c.history.withDefaults(tt.behavior), "ns/hpa", s.current, got)
				}
			}
		})
	}
}

func TestConvertDesiredReplicasWithRules(t *testing.T) {
	tests := []struct {
		current, desired, min, max int32
		want                       int32
		reason                     string
	}{
		{current: 5, desired: 5, min: 1, max: 10, want: 5, reason: "DesiredWithinRange"},
		{current: 5, desired: 0, min: 0, max: 10, want: 1, reason: "TooFewReplicas"}, // no scaling to zero
		{current: 5, desired: 1, min: 3, max: 10, want: 3, reason: "TooFewReplicas"},
		{current: 5, desired: 20, min: 1, max: 8, want: 8, reason: "TooManyReplicas"},
		{current: 5, desired: 20, min: 1, max: 100, want: 10, reason: "ScaleUpLimit"},
		{current: 1, desired: 20, min: 1, max: 100, want: 4, reason: "ScaleUpLimit"},
	}
	for _, tt := range tests {
		got, reason, _ := convertDesiredReplicasWithRules(tt.current, tt.desired, tt.min, tt.max)
		if got != tt.want || reason != tt.reason {
			t.Errorf("%+v: got %d %s", tt, got, reason)
		}
	}
}
