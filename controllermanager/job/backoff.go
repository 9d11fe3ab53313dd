package job

import (
	"math"
	"sort"
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/internal/podcondition"
)

// A Job whose pods keep failing is not retried at full speed: after the
// n-th failure in a row the next pod waits 10s·2^(n-1), at most 10
// minutes (Kubernetes' DefaultJobPodFailureBackOff and
// MaxJobPodFailureBackOff), counted from when the last pod failed. A success resets the count. With
// backoffLimitPerIndex each index has its own count, carried from pod to
// pod in the batch.kubernetes.io/job-index-failure-count annotation.
var (
	podFailureBackoff    = 10 * time.Second
	maxPodFailureBackoff = 10 * time.Minute
)

// backoffRecord is a Job's failures since its last success.
type backoffRecord struct {
	failuresAfterLastSuccess int32
	lastFailureTime          *time.Time
}

// backoffStore keeps each Job's record between syncs, by Job key. It is
// memory only: a restarted controller starts every Job afresh, as
// Kubernetes' does.
type backoffStore struct {
	mu      sync.Mutex
	records map[string]backoffRecord
}

func newBackoffStore() *backoffStore { return &backoffStore{records: map[string]backoffRecord{}} }

func (s *backoffStore) get(key string) backoffRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.records[key]
}

func (s *backoffStore) set(key string, r backoffRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records[key] = r
}

func (s *backoffStore) forget(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.records, key)
}

// nextRecord is the record once the pods that ended since the last sync
// are counted: failures add up; a success resets the count to the
// failures that ended after it.
func (s *backoffStore) nextRecord(key string, succeeded, failed []*corev1.Pod) backoffRecord {
	r := s.get(key)
	byFinish := func(pods []*corev1.Pod) {
		sort.SliceStable(pods, func(i, j int) bool { return finishedTime(pods[i]).Before(finishedTime(pods[j])) })
	}
	byFinish(succeeded)
	byFinish(failed)
	switch {
	case len(succeeded) == 0 && len(failed) == 0:
		return r
	case len(succeeded) == 0:
		last := finishedTime(failed[len(failed)-1])
		return backoffRecord{failuresAfterLastSuccess: r.failuresAfterLastSuccess + int32(len(failed)), lastFailureTime: &last}
	}
	lastSuccess := finishedTime(succeeded[len(succeeded)-1])
	next := backoffRecord{}
	for i := len(failed) - 1; i >= 0; i-- {
		t := finishedTime(failed[i])
		if !t.After(lastSuccess) {
			break
		}
		if next.lastFailureTime == nil {
			next.lastFailureTime = &t
		}
		next.failuresAfterLastSuccess++
	}
	return next
}

// remaining is how long the next pod must still wait.
func (r backoffRecord) remaining(clk clock.PassiveClock) time.Duration {
	return remainingBackoff(clk, r.failuresAfterLastSuccess, r.lastFailureTime)
}

// remainingBackoff: 10s after one failure, 20s after two, 40s, ... capped.
func remainingBackoff(clk clock.PassiveClock, failures int32, last *time.Time) time.Duration {
	if failures == 0 || last == nil {
		return 0
	}
	wait := podFailureBackoff
	for i := int32(1); i < failures && wait < maxPodFailureBackoff; i++ {
		wait *= 2
	}
	wait = min(wait, maxPodFailureBackoff)
	return max(wait-clk.Since(*last), 0)
}

// finishedTime is when a pod ended: its containers' last finishedAt, or
// when it became not Ready, or its deletion less the grace period, or
// failing all else its creation.
func finishedTime(p *corev1.Pod) time.Time {
	var latest *time.Time
	complete := len(p.Status.ContainerStatuses) > 0
	for _, cs := range p.Status.ContainerStatuses {
		t := cs.State.Terminated
		if t == nil || t.FinishedAt.IsZero() {
			complete = false
			break
		}
		if latest == nil || latest.Before(t.FinishedAt.Time) {
			latest = &t.FinishedAt.Time
		}
	}
	if complete {
		return *latest
	}
	if c := podcondition.Get(p, corev1.PodReady); c != nil && c.Status == corev1.ConditionFalse && !c.LastTransitionTime.IsZero() {
		return c.LastTransitionTime.Time
	}
	if p.DeletionTimestamp != nil {
		return p.DeletionTimestamp.Add(-time.Duration(ptr.Deref(p.DeletionGracePeriodSeconds, 0)) * time.Second)
	}
	return p.CreationTimestamp.Time
}

// indexFailureCount reads a pod's failure count annotations: the failures
// of its index before it that counted, and those an Ignore rule matched.
func indexFailureCount(p *corev1.Pod) (counted, ignored int32) {
	parse := func(key string) int32 {
		v, err := strconv.Atoi(p.Annotations[key])
		if err != nil || v < 0 || v > math.MaxInt32 {
			return 0 // missing or tampered with: start from zero
		}
		return int32(v)
	}
	return parse(batchv1.JobIndexFailureCountAnnotation), parse(batchv1.JobIndexIgnoredFailureCountAnnotation)
}

// remainingIndexBackoff is how long index must still wait, after the
// failure of lastFailed, its most recent pod.
func remainingIndexBackoff(clk clock.PassiveClock, lastFailed *corev1.Pod) time.Duration {
	if lastFailed == nil {
		return 0
	}
	counted, ignored := indexFailureCount(lastFailed)
	t := finishedTime(lastFailed)
	return remainingBackoff(clk, counted+ignored+1, &t)
}

// nextIndexFailureCounts are the annotations of the pod replacing
// replaced: its counts, plus its own failure.
func nextIndexFailureCounts(job *batchv1.Job, replaced *corev1.Pod) (counted, ignored int32) {
	if replaced == nil {
		return 0, 0
	}
	counted, ignored = indexFailureCount(replaced)
	if matchPodFailurePolicy(job.Spec.PodFailurePolicy, replaced).count {
		counted++
	} else {
		ignored++
	}
	return counted, ignored
}

// isIndexFailed: the pod's failure ends its index, by a FailIndex rule or
// because its index has used up backoffLimitPerIndex.
func isIndexFailed(job *batchv1.Job, pod *corev1.Pod) bool {
	if !isPodFailed(pod, job) {
		return false
	}
	m := matchPodFailurePolicy(job.Spec.PodFailurePolicy, pod)
	if m.action != nil && *m.action == batchv1.PodFailurePolicyActionFailIndex {
		return true
	}
	counted, _ := indexFailureCount(pod)
	return m.count && counted >= *job.Spec.BackoffLimitPerIndex
}

// podsWithDelayedDeletionPerIndex: with backoffLimitPerIndex, the last
// failed pod of an index that is still to be retried keeps its finalizer
// until its replacement exists, because the replacement copies its
// failure count from it.
func podsWithDelayedDeletionPerIndex(jc *syncContext) map[int]*corev1.Pod {
	active := indexesOf(jc.activePods)
	out := map[int]*corev1.Pod{}
	for _, p := range jc.pods {
		if !hasTrackingFinalizer(p) || jc.expectedRmFinalizers[p.UID] || !isPodFailed(p, jc.job) {
			continue
		}
		ix, ok := validIndex(jc.job, p)
		if !ok || jc.succeededIndexes.has(ix) || jc.failedIndexes.has(ix) || active[ix] {
			continue
		}
		if prev, ok := out[ix]; ok {
			pc, pi := indexFailureCount(prev)
			c, i := indexFailureCount(p)
			if pc+pi > c+i || finishedTime(p).Before(finishedTime(prev)) {
				continue
			}
		}
		out[ix] = p
	}
	return out
}
