package job

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
)

// A success policy (spec.successPolicy, Indexed Jobs only) declares an
// Indexed Job successful before every index has succeeded: when the
// indexes of a rule's succeededIndexes have all succeeded, or
// succeededCount of them (or of all indexes, without succeededIndexes).
// The Job then gets SuccessCriteriaMet, its remaining pods are stopped,
// and it becomes Complete. A leader-worker Job says "succeededIndexes: 0":
// once the leader is done, so is the Job.

// matchSuccessPolicy returns the message of the first rule the succeeded
// indexes satisfy: "Matched rules at index 0".
func matchSuccessPolicy(policy *batchv1.SuccessPolicy, completions int32, succeeded orderedIntervals) (string, bool) {
	if policy == nil || len(succeeded) == 0 {
		return "", false
	}
	for i, rule := range policy.Rules {
		switch {
		case rule.SucceededIndexes != nil:
			required := parseIndexes(*rule.SucceededIndexes, int(completions))
			if len(required) == 0 {
				continue // nothing parsed: the rule cannot be met
			}
			if n := overlap(required, succeeded); n == required.total() || (rule.SucceededCount != nil && n >= int(*rule.SucceededCount)) {
				return fmt.Sprintf("Matched rules at index %d", i), true
			}
		case rule.SucceededCount != nil && succeeded.total() >= int(*rule.SucceededCount):
			return fmt.Sprintf("Matched rules at index %d", i), true
		}
	}
	return "", false
}

// overlap counts the indexes two lists share.
func overlap(a, b orderedIntervals) int {
	n := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		if lo, hi := max(a[i].First, b[j].First), min(a[i].Last, b[j].Last); hi >= lo {
			n += hi - lo + 1
		}
		if a[i].Last < b[j].Last {
			i++
		} else {
			j++
		}
	}
	return n
}
