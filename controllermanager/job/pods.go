package job

import (
	"slices"
	"sort"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/internal/podcondition"
)

// How the job controller sees its pods.
//
//   - active: not finished and not being deleted, counted in
//     status.active;
//   - terminating: being deleted, not finished yet (status.terminating);
//   - succeeded: phase Succeeded;
//   - failed: phase Failed, or — unless podReplacementPolicy is Failed —
//     being deleted before it succeeded, since it will never succeed now.
//
// Every pod carries the batch.kubernetes.io/job-tracking finalizer from
// its creation until the controller has counted how it ended: the pod
// cannot vanish (deleted by a user, the garbage collector, a node's
// eviction) before it is counted.

func hasTrackingFinalizer(p *corev1.Pod) bool {
	return slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer)
}

func isTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

func activePods(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if !isTerminal(p) && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

func terminatingPods(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if !isTerminal(p) && p.DeletionTimestamp != nil {
			out = append(out, p)
		}
	}
	return out
}

func countReady(pods []*corev1.Pod) int32 {
	var n int32
	for _, p := range pods {
		if podcondition.IsReady(p) {
			n++
		}
	}
	return n
}

// onlyReplaceFailedPods: podReplacementPolicy Failed, a replacement waits
// until the pod it replaces has failed, not merely begun terminating.
func onlyReplaceFailedPods(job *batchv1.Job) bool {
	return job.Spec.PodReplacementPolicy != nil && *job.Spec.PodReplacementPolicy == batchv1.Failed
}

func isPodFailed(p *corev1.Pod, job *batchv1.Job) bool {
	if p.Status.Phase == corev1.PodFailed {
		return true
	}
	if onlyReplaceFailedPods(job) {
		return false
	}
	return p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded
}

// sortForRemoval orders pods as Kubernetes' ActivePods does, those it
// hurts least to lose first: unscheduled, then pending, then not ready,
// then ready for the shortest time, then restarted most, then newest.
func sortForRemoval(pods []*corev1.Pod) {
	phase := map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}
	restarts := func(p *corev1.Pod) int32 {
		var n int32
		for _, cs := range p.Status.ContainerStatuses {
			n = max(n, cs.RestartCount)
		}
		return n
	}
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		if (a.Spec.NodeName == "") != (b.Spec.NodeName == "") {
			return a.Spec.NodeName == ""
		}
		if phase[a.Status.Phase] != phase[b.Status.Phase] {
			return phase[a.Status.Phase] < phase[b.Status.Phase]
		}
		if podcondition.IsReady(a) != podcondition.IsReady(b) {
			return !podcondition.IsReady(a)
		}
		if podcondition.IsReady(a) {
			ra, rb := podcondition.Get(a, corev1.PodReady).LastTransitionTime, podcondition.Get(b, corev1.PodReady).LastTransitionTime
			if !ra.Equal(&rb) {
				return rb.Before(&ra) // ready more recently goes first
			}
		}
		if restarts(a) != restarts(b) {
			return restarts(a) > restarts(b)
		}
		return b.CreationTimestamp.Before(&a.CreationTimestamp)
	})
}

// podsForRemoval returns at least rmAtLeast active pods to delete, and
// for an Indexed Job also every pod without a valid index and all but one
// of the pods sharing an index.
func podsForRemoval(job *batchv1.Job, pods []*corev1.Pod, rmAtLeast int) []*corev1.Pod {
	var rm, left []*corev1.Pod
	if isIndexed(job) {
		byIndex := map[int][]*corev1.Pod{}
		for _, p := range pods {
			ix, ok := validIndex(job, p)
			if !ok {
				rm = append(rm, p)
				continue
			}
			byIndex[ix] = append(byIndex[ix], p)
		}
		ixs := make([]int, 0, len(byIndex))
		for ix := range byIndex {
			ixs = append(ixs, ix)
		}
		sort.Ints(ixs)
		for _, ix := range ixs {
			same := byIndex[ix]
			sortForRemoval(same) // keep the one it would hurt most to lose
			rm = append(rm, same[:len(same)-1]...)
			left = append(left, same[len(same)-1])
		}
	} else {
		left = slices.Clone(pods)
	}
	if len(rm) < rmAtLeast {
		sortForRemoval(left)
		rm = append(rm, left[:rmAtLeast-len(rm)]...)
	}
	return rm
}
