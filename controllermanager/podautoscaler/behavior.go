package podautoscaler

import (
	"math"
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

// The rate an autoscaler without a behavior may scale up at (upstream's
// scaleUpLimitFactor and scaleUpLimitMinimum): to twice its replicas, or
// 4, whichever is more, in one step.
const (
	scaleUpLimitFactor  = 2.0
	scaleUpLimitMinimum = 4.0
)

// recommendation is one sync's unstabilized desired count.
type recommendation struct {
	replicas int32
	at       time.Time
}

// scaleEvent is one rescale: how many replicas it added (in the up list)
// or removed (in the down list), and when. outdated events are reused.
type scaleEvent struct {
	change   int32
	at       time.Time
	outdated bool
}

// history is what the controller remembers of each autoscaler between
// syncs, as upstream's HorizontalController does in memory: its recent
// recommendations (the stabilization windows look back over them) and
// its recent rescales (the policies' periods count them).
type history struct {
	clock clock.PassiveClock
	// downscaleStabilisationWindow: --horizontal-pod-autoscaler-downscale-stabilization,
	// the window of autoscalers without a behavior, or whose scaleDown
	// names none.
	downscaleStabilisationWindow time.Duration

	mu              sync.Mutex
	recommendations map[string][]recommendation
	scaleUpEvents   map[string][]scaleEvent
	scaleDownEvents map[string][]scaleEvent
}

func newHistory(clk clock.PassiveClock, downscaleWindow time.Duration) *history {
	return &history{clock: clk, downscaleStabilisationWindow: downscaleWindow, recommendations: map[string][]recommendation{},
		scaleUpEvents: map[string][]scaleEvent{}, scaleDownEvents: map[string][]scaleEvent{}}
}

// forget drops what is remembered of a deleted autoscaler.
func (h *history) forget(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.recommendations, key)
	delete(h.scaleUpEvents, key)
	delete(h.scaleDownEvents, key)
}

// recordInitialRecommendation makes the current count the first
// recommendation of an autoscaler seen for the first time, so that a
// restarted controller does not scale down at once.
func (h *history) recordInitialRecommendation(key string, currentReplicas int32) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.recommendations[key] == nil {
		h.recommendations[key] = []recommendation{{currentReplicas, h.clock.Now()}}
	}
}

// stabilize is upstream's stabilizeRecommendation, for autoscalers
// without a behavior: the highest recommendation of the downscale window,
// this one included, which is recorded.
func (h *history) stabilize(key string, desired int32) int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.clock.Now()
	cutoff := now.Add(-h.downscaleStabilisationWindow)
	stabilized := desired
	reuse := -1
	for i, r := range h.recommendations[key] {
		if r.at.Before(cutoff) {
			reuse = i
			continue
		}
		stabilized = max(stabilized, r.replicas)
	}
	h.record(key, reuse, recommendation{desired, now})
	return stabilized
}

// stabilizeWithBehavior is upstream's stabilizeRecommendationWithBehaviors:
// the count is kept between the lowest recommendation of the scale-up
// window and the highest of the scale-down window, so that a brief dip or
// spike does not move it; the unstabilized one is recorded. It also says
// the reason and message of a stabilized count.
func (h *history) stabilizeWithBehavior(key string, current, desired int32, up, down *autoscalingv2.HPAScalingRules) (int32, string, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.clock.Now()
	upCutoff := now.Add(-time.Duration(*up.StabilizationWindowSeconds) * time.Second)
	downCutoff := now.Add(-time.Duration(*down.StabilizationWindowSeconds) * time.Second)
	upRecommendation, downRecommendation := desired, desired
	reuse := -1
	for i, r := range h.recommendations[key] {
		if r.at.After(upCutoff) {
			upRecommendation = min(upRecommendation, r.replicas)
		}
		if r.at.After(downCutoff) {
			downRecommendation = max(downRecommendation, r.replicas)
		}
		if r.at.Before(upCutoff) && r.at.Before(downCutoff) {
			reuse = i
		}
	}
	stabilized := min(max(current, upRecommendation), downRecommendation)
	h.record(key, reuse, recommendation{desired, now})
	if desired >= current {
		return stabilized, "ScaleUpStabilized", "recent recommendations were lower than current one, applying the lowest recent recommendation"
	}
	return stabilized, "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation"
}

// record stores r over the out-of-window entry at reuse, or appends it.
func (h *history) record(key string, reuse int, r recommendation) {
	if reuse >= 0 {
		h.recommendations[key][reuse] = r
		return
	}
	h.recommendations[key] = append(h.recommendations[key], r)
}

// storeScaleEvent remembers a rescale from prev to next replicas, for the
// policies of later syncs. Events older than the longest policy period
// are outdated, and their slots reused.
func (h *history) storeScaleEvent(behavior *autoscalingv2.HorizontalPodAutoscalerBehavior, key string, prev, next int32) {
	if behavior == nil {
		return // only behaviors' policies look back at rescales
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	events, rules, change := h.scaleUpEvents, behavior.ScaleUp, next-prev
	if next < prev {
		events, rules, change = h.scaleDownEvents, behavior.ScaleDown, prev-next
	}
	now := h.clock.Now()
	cutoff := now.Add(-time.Duration(longestPolicyPeriod(rules)) * time.Second)
	list := events[key]
	reuse := -1
	for i := range list {
		if list[i].at.Before(cutoff) {
			list[i].outdated = true
		}
		if list[i].outdated && reuse < 0 {
			reuse = i
		}
	}
	if reuse >= 0 {
		list[reuse] = scaleEvent{change: change, at: now}
	} else {
		list = append(list, scaleEvent{change: change, at: now})
	}
	events[key] = list
}

func longestPolicyPeriod(rules *autoscalingv2.HPAScalingRules) int32 {
	var longest int32
	if rules != nil {
		for _, p := range rules.Policies {
			longest = max(longest, p.PeriodSeconds)
		}
	}
	return longest
}

// changeWithin is how many replicas the events changed in the last
// periodSeconds.
func (h *history) changeWithin(periodSeconds int32, events []scaleEvent) int32 {
	cutoff := h.clock.Now().Add(-time.Duration(periodSeconds) * time.Second)
	var change int32
	for _, e := range events {
		if e.at.After(cutoff) {
			change += e.change
		}
	}
	return change
}

// scaleUpLimit is the most replicas the scale-up policies allow now
// (upstream's calculateScaleUpLimitWithScalingRules): each policy allows
// its Pods or Percent more than there were at the start of its period;
// selectPolicy Max takes the largest allowance, Min the smallest, and
// Disabled none.
func (h *history) scaleUpLimit(key string, current int32, rules *autoscalingv2.HPAScalingRules) int32 {
	if *rules.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return current
	}
	pick, result := larger, int32(math.MinInt32)
	if *rules.SelectPolicy == autoscalingv2.MinChangePolicySelect {
		pick, result = smaller, math.MaxInt32
	}
	for _, p := range rules.Policies {
		start := h.periodStartReplicas(key, current, p.PeriodSeconds)
		proposed := start + p.Value
		if p.Type == autoscalingv2.PercentScalingPolicy {
			// Rounded up, or a small target would never grow.
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		result = pick(result, proposed)
	}
	return result
}

// scaleDownLimit is the fewest replicas the scale-down policies allow now
// (upstream's calculateScaleDownLimitWithBehaviors).
func (h *history) scaleDownLimit(key string, current int32, rules *autoscalingv2.HPAScalingRules) int32 {
	if *rules.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return current
	}
	pick, result := smaller, int32(math.MaxInt32)
	if *rules.SelectPolicy == autoscalingv2.MinChangePolicySelect {
		pick, result = larger, math.MinInt32
	}
	for _, p := range rules.Policies {
		start := h.periodStartReplicas(key, current, p.PeriodSeconds)
		proposed := start - p.Value
		if p.Type == autoscalingv2.PercentScalingPolicy {
			proposed = int32(float64(start) * (1 - float64(p.Value)/100))
		}
		result = pick(result, proposed)
	}
	return result
}

func larger(a, b int32) int32  { return max(a, b) }
func smaller(a, b int32) int32 { return min(a, b) }

// periodStartReplicas is how many replicas there were periodSeconds ago,
// by the rescales since.
func (h *history) periodStartReplicas(key string, current, periodSeconds int32) int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return current - h.changeWithin(periodSeconds, h.scaleUpEvents[key]) + h.changeWithin(periodSeconds, h.scaleDownEvents[key])
}

// withDefaults is the behavior of hpa with the controller's downscale
// window where its scaleDown names none (upstream's
// maybeInitScaleDownStabilizationWindow); nil without a behavior.
func (h *history) withDefaults(b *autoscalingv2.HorizontalPodAutoscalerBehavior) *autoscalingv2.HorizontalPodAutoscalerBehavior {
	if b == nil {
		return nil
	}
	b = b.DeepCopy()
	// The API server fills both from these defaults; an object written
	// before it did may lack them.
	if b.ScaleUp == nil {
		b.ScaleUp = defaultScaleUpRules()
	}
	if b.ScaleDown == nil {
		b.ScaleDown = defaultScaleDownRules()
	}
	if b.ScaleUp.SelectPolicy == nil {
		b.ScaleUp.SelectPolicy = ptr.To(autoscalingv2.MaxChangePolicySelect)
	}
	if b.ScaleDown.SelectPolicy == nil {
		b.ScaleDown.SelectPolicy = ptr.To(autoscalingv2.MaxChangePolicySelect)
	}
	if b.ScaleUp.StabilizationWindowSeconds == nil {
		b.ScaleUp.StabilizationWindowSeconds = ptr.To[int32](0)
	}
	if b.ScaleDown.StabilizationWindowSeconds == nil {
		seconds := int32(h.downscaleStabilisationWindow.Seconds())
		b.ScaleDown.StabilizationWindowSeconds = &seconds
	}
	return b
}

// defaultScaleUpRules and defaultScaleDownRules are Kubernetes' defaults:
// up by 4 pods or 100% (whichever is more) every 15 s, at once; down by
// up to 100% every 15 s, after the downscale window.
func defaultScaleUpRules() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](0), SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		}}
}

func defaultScaleDownRules() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}}
}

// The condition status of ScalingLimited: true when the limits moved the count.
func limitedStatus(desired, limited int32) corev1.ConditionStatus {
	if desired == limited {
		return corev1.ConditionFalse
	}
	return corev1.ConditionTrue
}
