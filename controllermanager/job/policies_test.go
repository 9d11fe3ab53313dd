package job

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

func TestIndexIntervals(t *testing.T) {
	tests := []struct {
		name        string
		status      string
		completions int
		add         []int
		want        string
		total       int
	}{
		{"nothing yet", "", 5, nil, "", 0},
		{"a new index joins its neighbours", "0,2", 5, []int{1}, "0-2", 3},
		{"two adjacent indexes print as a pair", "", 5, []int{3, 4}, "3,4", 2},
		{"a range and a lone index", "0-2", 10, []int{7}, "0-2,7", 4},
		{"indexes at or above completions are dropped (a scaled-down Job)", "0-9", 4, nil, "0-3", 4},
		{"an unparsable fragment is skipped", "0,x,3", 5, nil, "0,3", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseIndexes(tt.status, tt.completions).withIndexes(tt.add)
			if got.String() != tt.want || got.total() != tt.total {
				t.Errorf("%q (%d indexes), want %q (%d)", got.String(), got.total(), tt.want, tt.total)
			}
		})
	}
}

func TestMatchSuccessPolicy(t *testing.T) {
	rules := func(r ...batchv1.SuccessPolicyRule) *batchv1.SuccessPolicy { return &batchv1.SuccessPolicy{Rules: r} }
	tests := []struct {
		name      string
		policy    *batchv1.SuccessPolicy
		succeeded string
		want      string // "" = not met
	}{
		{"the leader's index alone", rules(batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To("0")}), "0", "Matched rules at index 0"},
		{"a worker's success does not make the leader's", rules(batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To("0")}), "1-3", ""},
		{"a count of any indexes", rules(batchv1.SuccessPolicyRule{SucceededCount: ptr.To[int32](2)}), "1,4", "Matched rules at index 0"},
		{"a count within given indexes", rules(batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To("2-5"), SucceededCount: ptr.To[int32](2)}), "0,1,3", ""},
		{"the second rule matches", rules(batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To("9")},
			batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To("2-5"), SucceededCount: ptr.To[int32](2)}), "3,4", "Matched rules at index 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, met := matchSuccessPolicy(tt.policy, 10, parseIndexes(tt.succeeded, 10))
			if met != (tt.want != "") || msg != tt.want {
				t.Errorf("%q, %v; want %q", msg, met, tt.want)
			}
		})
	}
}

func failedPod(exitCode int32, conds ...corev1.PodConditionType) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Status: corev1.PodStatus{Phase: corev1.PodFailed,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exitCode}}}}}}
	for _, c := range conds {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue})
	}
	return p
}

func TestMatchPodFailurePolicy(t *testing.T) {
	policy := &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}},
		{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: "In", Values: []int32{42}}},
		{Action: batchv1.PodFailurePolicyActionCount, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: "NotIn", Values: []int32{1, 2}}},
	}}
	tests := []struct {
		name    string
		pod     *corev1.Pod
		failJob string
		count   bool
		action  batchv1.PodFailurePolicyAction
	}{
		{"an evicted pod is ignored, whatever its exit code", failedPod(42, corev1.DisruptionTarget), "", false, batchv1.PodFailurePolicyActionIgnore},
		{"exit code 42 fails the Job", failedPod(42), "Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 1", true, batchv1.PodFailurePolicyActionFailJob},
		{"exit code 3 is NotIn 1,2: Count", failedPod(3), "", true, batchv1.PodFailurePolicyActionCount},
		{"exit code 1 matches no rule: counted", failedPod(1), "", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := matchPodFailurePolicy(policy, tt.pod)
			if ptr.Deref(m.failJob, "") != tt.failJob || m.count != tt.count || ptr.Deref(m.action, "") != tt.action {
				t.Errorf("%+v, want failJob %q count %v action %q", m, tt.failJob, tt.count, tt.action)
			}
		})
	}
}

func TestFailureBackoff(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	last := clk.Now().Add(-3 * time.Second)
	tests := []struct {
		failures int32
		want     time.Duration
	}{
		{0, 0},
		{1, 7 * time.Second},                 // 10s from the failure
		{2, 17 * time.Second},                // 20s
		{4, 77 * time.Second},                // 80s
		{20, 10*time.Minute - 3*time.Second}, // capped
	}
	for _, tt := range tests {
		if got := remainingBackoff(clk, tt.failures, &last); got != tt.want {
			t.Errorf("after %d failures: wait %v, want %v", tt.failures, got, tt.want)
		}
	}
}

func TestPodsForRemovalPrefersThePodsThatLoseLeast(t *testing.T) {
	pod := func(name, node string, phase corev1.PodPhase, ready bool, index string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{}}, Spec: corev1.PodSpec{NodeName: node},
			Status: corev1.PodStatus{Phase: phase}}
		if ready {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		if index != "" {
			p.Annotations[batchv1.JobCompletionIndexAnnotation] = index
		}
		return p
	}
	nonIndexed := &batchv1.Job{}
	pods := []*corev1.Pod{pod("ready", "n", corev1.PodRunning, true, ""), pod("unscheduled", "", corev1.PodPending, false, ""),
		pod("pending", "n", corev1.PodPending, false, ""), pod("running", "n", corev1.PodRunning, false, "")}
	names := func(ps []*corev1.Pod) (out []string) {
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	if got := names(podsForRemoval(nonIndexed, pods, 3)); len(got) != 3 || got[0] != "unscheduled" || got[1] != "pending" || got[2] != "running" {
		t.Errorf("removal order %v, want unscheduled, pending, running (not ready)", got)
	}
	indexed := &batchv1.Job{Spec: batchv1.JobSpec{CompletionMode: ptr.To(batchv1.IndexedCompletion), Completions: ptr.To[int32](2)}}
	dup := []*corev1.Pod{pod("a0", "n", corev1.PodRunning, true, "0"), pod("b0", "n", corev1.PodPending, false, "0"),
		pod("c1", "n", corev1.PodRunning, true, "1"), pod("d5", "n", corev1.PodRunning, true, "5"), pod("e", "n", corev1.PodRunning, true, "")}
	got := names(podsForRemoval(indexed, dup, 0))
	want := map[string]bool{"b0": true, "d5": true, "e": true}
	if len(got) != 3 || !want[got[0]] || !want[got[1]] || !want[got[2]] {
		t.Errorf("removed %v, want the duplicate of index 0 that is pending, the index beyond completions, the pod without one", got)
	}
}

func TestASyncWaitsForTheCacheToSeeItsOwnStatusWrite(t *testing.T) {
	c := &Controller{}
	at := func(rv string) *batchv1.Job { return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}} }
	if c.behindOwnWrite("ns/j", at("5")) {
		t.Error("a Job this controller never wrote is not behind")
	}
	c.wroteStatus("ns/j", at("10"))
	if !c.behindOwnWrite("ns/j", at("9")) {
		t.Error("a cached Job older than our status write is behind")
	}
	if c.behindOwnWrite("ns/j", at("10")) || c.behindOwnWrite("ns/j", at("9")) {
		t.Error("once the cache has caught up, the write is forgotten")
	}
}
