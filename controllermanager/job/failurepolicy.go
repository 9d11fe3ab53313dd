package job

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// A pod failure policy (spec.podFailurePolicy) says what a failed pod
// means, by its containers' exit codes or its conditions: FailJob ends the
// Job at once, FailIndex ends the pod's index, Ignore does not count the
// failure against backoffLimit (an eviction, a preemption: the pod was
// not at fault), Count counts it as usual. The first rule that matches
// decides; no rule matching means Count.

// policyMatch is what a failed pod means under the Job's policy.
type policyMatch struct {
	// failJob is the Job's failure message when a FailJob rule matched.
	failJob *string
	// count: the failure counts against the backoff limits.
	count bool
	// action is the action of the rule that matched, if one did.
	action *batchv1.PodFailurePolicyAction
}

// matchPodFailurePolicy matches a failed pod against the policy's rules,
// in order.
func matchPodFailurePolicy(policy *batchv1.PodFailurePolicy, pod *corev1.Pod) policyMatch {
	if policy == nil {
		return policyMatch{count: true}
	}
	for i, rule := range policy.Rules {
		var failJob string
		switch {
		case rule.OnExitCodes != nil:
			cs := matchOnExitCodes(&pod.Status, rule.OnExitCodes)
			if cs == nil {
				continue
			}
			failJob = fmt.Sprintf("Container %s for pod %s/%s failed with exit code %v matching %v rule at index %d",
				cs.Name, pod.Namespace, pod.Name, cs.State.Terminated.ExitCode, rule.Action, i)
		case rule.OnPodConditions != nil:
			cond := matchOnPodConditions(&pod.Status, rule.OnPodConditions)
			if cond == nil {
				continue
			}
			failJob = fmt.Sprintf("Pod %s/%s has condition %v matching %v rule at index %d",
				pod.Namespace, pod.Name, cond.Type, rule.Action, i)
		default:
			continue
		}
		action := rule.Action
		switch action {
		case batchv1.PodFailurePolicyActionIgnore:
			return policyMatch{count: false, action: &action}
		case batchv1.PodFailurePolicyActionFailJob:
			return policyMatch{failJob: &failJob, count: true, action: &action}
		case batchv1.PodFailurePolicyActionFailIndex, batchv1.PodFailurePolicyActionCount:
			return policyMatch{count: true, action: &action}
		}
	}
	return policyMatch{count: true}
}

// matchOnExitCodes returns the first terminated container (app containers
// first, then init containers) whose non-zero exit code the requirement
// matches.
func matchOnExitCodes(st *corev1.PodStatus, req *batchv1.PodFailurePolicyOnExitCodesRequirement) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{st.ContainerStatuses, st.InitContainerStatuses} {
		for i := range list {
			cs := &list[i]
			t := cs.State.Terminated
			if t == nil || t.ExitCode == 0 || (req.ContainerName != nil && *req.ContainerName != cs.Name) {
				continue // still terminating, succeeded, or another container
			}
			in := slices.Contains(req.Values, t.ExitCode)
			if (req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && in) || (req.Operator == batchv1.PodFailurePolicyOnExitCodesOpNotIn && !in) {
				return cs
			}
		}
	}
	return nil
}

// matchOnPodConditions returns the pod's first condition a pattern matches.
func matchOnPodConditions(st *corev1.PodStatus, patterns []batchv1.PodFailurePolicyOnPodConditionsPattern) *corev1.PodCondition {
	for i := range st.Conditions {
		for _, p := range patterns {
			if st.Conditions[i].Type == p.Type && st.Conditions[i].Status == p.Status {
				return &st.Conditions[i]
			}
		}
	}
	return nil
}

// failJobMessage is the message of the first failed pod a FailJob rule
// matches, if any: the Job fails with it.
func failJobMessage(job *batchv1.Job, pods []*corev1.Pod) *string {
	if job.Spec.PodFailurePolicy == nil {
		return nil
	}
	for _, p := range pods {
		if isPodFailed(p, job) {
			if m := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p); m.failJob != nil {
				return m.failJob
			}
		}
	}
	return nil
}

// countedFailures is how many of the failed pods count against the
// backoff limit (those no Ignore rule matched).
func countedFailures(job *batchv1.Job, failed []*corev1.Pod) int {
	n := 0
	for _, p := range failed {
		if matchPodFailurePolicy(job.Spec.PodFailurePolicy, p).count {
			n++
		}
	}
	return n
}
