package job

import (
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// An Indexed Job runs one pod per index 0..completions-1, each knowing its
// index (the batch.kubernetes.io/job-completion-index annotation and
// label, and $JOB_COMPLETION_INDEX). Its status lists the indexes that
// succeeded, and those that failed, as compressed intervals: "0-2,5"
// (orderedIntervals).

// unknownIndex is the index of a pod that has none (or a bad one).
const unknownIndex = -1

// completionIndexEnv is the variable that tells a pod its index.
const completionIndexEnv = "JOB_COMPLETION_INDEX"

func isIndexed(job *batchv1.Job) bool {
	return job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batchv1.IndexedCompletion
}

func hasBackoffLimitPerIndex(job *batchv1.Job) bool { return job.Spec.BackoffLimitPerIndex != nil }

// completionIndex reads a pod's index from its annotation.
func completionIndex(pod *corev1.Pod) int {
	v, ok := pod.Annotations[batchv1.JobCompletionIndexAnnotation]
	if !ok {
		return unknownIndex
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 {
		return unknownIndex
	}
	return i
}

// validIndex: the pod has an index, and it is below completions (a
// scaled-down elastic Job can have pods above).
func validIndex(job *batchv1.Job, pod *corev1.Pod) (int, bool) {
	ix := completionIndex(pod)
	return ix, ix != unknownIndex && ix < int(*job.Spec.Completions)
}

// interval is the indexes First..Last, both included.
type interval struct{ First, Last int }

// orderedIntervals are disjoint, non-adjacent intervals in increasing order.
type orderedIntervals []interval

// parseIndexes reads a list such as "0-2,5", dropping what is at or above
// completions; a bad fragment is skipped (the API server validates what
// the controller wrote).
func parseIndexes(s string, completions int) orderedIntervals {
	if s == "" {
		return nil
	}
	var out orderedIntervals
	for _, frag := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(frag, "-")
		first, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		if first >= completions {
			break
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil {
				continue
			}
			last = min(last, completions-1)
		}
		if n := len(out); n > 0 && out[n-1].Last == first-1 {
			out[n-1].Last = last
		} else {
			out = append(out, interval{first, last})
		}
	}
	return out
}

// withIndexes returns oi with the indexes added, given in increasing order.
func (oi orderedIntervals) withIndexes(indexes []int) orderedIntervals {
	add := make(orderedIntervals, len(indexes))
	for i, ix := range indexes {
		add[i] = interval{ix, ix}
	}
	return oi.merge(add)
}

// merge returns the union of two ordered lists.
func (oi orderedIntervals) merge(other orderedIntervals) orderedIntervals {
	var out orderedIntervals
	push := func(iv interval) {
		if n := len(out); n > 0 && iv.First <= out[n-1].Last+1 {
			out[n-1].Last = max(out[n-1].Last, iv.Last)
			return
		}
		out = append(out, iv)
	}
	i, j := 0, 0
	for i < len(oi) || j < len(other) {
		if j == len(other) || (i < len(oi) && oi[i].First < other[j].First) {
			push(oi[i])
			i++
		} else {
			push(other[j])
			j++
		}
	}
	return out
}

// total is how many indexes the list holds.
func (oi orderedIntervals) total() int {
	n := 0
	for _, iv := range oi {
		n += iv.Last - iv.First + 1
	}
	return n
}

// has reports whether ix is in the list.
func (oi *orderedIntervals) has(ix int) bool {
	if oi == nil {
		return false
	}
	for _, iv := range *oi {
		if iv.First <= ix && ix <= iv.Last {
			return true
		}
	}
	return false
}

// String writes the list as the status does: "1,3-5"; a pair is "1,2".
func (oi orderedIntervals) String() string {
	var b strings.Builder
	for _, iv := range oi {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(iv.First))
		switch {
		case iv.Last == iv.First+1:
			b.WriteByte(',')
			b.WriteString(strconv.Itoa(iv.Last))
		case iv.Last > iv.First:
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(iv.Last))
		}
	}
	return b.String()
}

// indexesOf are the indexes of the pods.
func indexesOf(pods []*corev1.Pod) map[int]bool {
	out := map[int]bool{}
	for _, p := range pods {
		if ix := completionIndex(p); ix != unknownIndex {
			out[ix] = true
		}
	}
	return out
}

// firstPendingIndexes returns up to count indexes below completions that
// no active pod runs and that have not succeeded nor failed; with
// podReplacementPolicy Failed, a terminating pod's index is not pending
// either, since it is not replaced until it has failed.
func firstPendingIndexes(jc *syncContext, count, completions int) []int {
	if count == 0 {
		return nil
	}
	busy := indexesOf(jc.activePods)
	if onlyReplaceFailedPods(jc.job) {
		for ix := range indexesOf(terminatingPods(jc.pods)) {
			busy[ix] = true
		}
	}
	var out []int
	for ix := 0; ix < completions && len(out) < count; ix++ {
		if !busy[ix] && !jc.succeededIndexes.has(ix) && !jc.failedIndexes.has(ix) {
			out = append(out, ix)
		}
	}
	return out
}
