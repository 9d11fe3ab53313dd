package job

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/podcondition"
)

// maxPodCreateDeletePerSync caps the pods created or deleted in one sync,
// so one huge Job cannot monopolise the API server (Kubernetes: 500).
const maxPodCreateDeletePerSync = 500

// maxGeneratedNameLength is the longest generateName the API server
// extends with 5 random characters within a 63-character name.
const maxGeneratedNameLength = 63 - 5

// manageJob creates or deletes pods so that the Job runs the pods it
// should now, and returns how many are active then:
//
//   - suspended: none (every active pod is deleted);
//   - with completions: min(parallelism, completions - succeeded);
//   - without: parallelism until the first success, then no new ones.
//
// A replacement for failed pods waits out the failure backoff; with
// podReplacementPolicy Failed, a terminating pod still counts as running.
// An Indexed Job creates the lowest pending indexes.
func (c *Controller) manageJob(ctx context.Context, jc *syncContext) (int32, error) {
	job := jc.job
	active := int32(len(jc.activePods))
	if suspended(job) {
		if active > 0 {
			c.log.Info("job sync: suspended, deleting its active pods", "job", jc.key, "active", active)
		}
		return c.deleteSome(ctx, jc, podsForRemoval(job, jc.activePods, int(active)))
	}
	parallelism := *job.Spec.Parallelism
	var want int32
	switch {
	case job.Spec.Completions == nil && jc.succeeded > 0:
		want = active // done at the first success: start nothing more
	case job.Spec.Completions == nil:
		want = parallelism
	default:
		want = max(min(*job.Spec.Completions-jc.succeeded, parallelism), 0)
	}
	rm := podsForRemoval(job, jc.activePods, int(max(active-want, 0)))
	if len(rm) > 0 {
		// Deleting and creating in one sync could fight (an Indexed Job
		// with a repeated index); deleting goes first.
		c.log.Info("job sync: too many pods, deleting", "job", jc.key, "want", want, "active", active, "deleting", len(rm))
		return c.deleteSome(ctx, jc, rm[:min(len(rm), maxPodCreateDeletePerSync)])
	}
	var terminating int32
	if onlyReplaceFailedPods(job) {
		terminating = jc.terminating
	}
	diff := want - terminating - active
	if diff <= 0 {
		return active, nil
	}
	if !hasBackoffLimitPerIndex(job) {
		if wait := jc.newBackoffRecord.remaining(c.clock); wait > 0 {
			c.log.Info("job sync: pods failed, waiting before replacing them", "job", jc.key,
				"failuresAfterLastSuccess", jc.newBackoffRecord.failuresAfterLastSuccess, "wait", wait)
			c.enqueueAfter(job, wait)
			return active, nil
		}
	}
	diff = min(diff, maxPodCreateDeletePerSync)
	indexes := []int(nil)
	if isIndexed(job) {
		indexes = firstPendingIndexes(jc, int(diff), int(*job.Spec.Completions))
		if hasBackoffLimitPerIndex(job) {
			if wait := indexesReady(c, jc, &indexes); len(indexes) == 0 && wait > 0 {
				c.enqueueAfter(job, wait)
				return active, nil
			}
		}
		diff = int32(len(indexes))
	}
	if diff == 0 {
		return active, nil
	}
	c.log.Info("job sync: too few pods, creating", "job", jc.key, "want", want, "active", active, "creating", diff, "indexes", indexes)
	created, err := c.createPods(ctx, jc, int(diff), indexes)
	return active + int32(created), err
}

// indexesReady keeps, of the pending indexes, those whose failure
// backoff is over; if none is, it returns the shortest wait.
func indexesReady(c *Controller, jc *syncContext, indexes *[]int) (wait time.Duration) {
	var ready []int
	first := true
	for _, ix := range *indexes {
		left := remainingIndexBackoff(c.clock, jc.podsWithDelayedDeletionPerIndex[ix])
		if left == 0 {
			ready = append(ready, ix)
		} else if first || left < wait {
			wait, first = left, false
		}
	}
	*indexes = ready
	if len(ready) > 0 {
		return 0
	}
	return wait
}

// createPods creates n pods (with the given indexes, for an Indexed Job)
// in batches of 1, 2, 4, ...: if the first cannot be created (a quota, a
// bad template), we learn it from one request, not five hundred.
func (c *Controller) createPods(ctx context.Context, jc *syncContext, n int, indexes []int) (int, error) {
	c.exp.expect(jc.key, n, 0)
	var created atomic.Int32
	var firstErr error
	for batch, done := 1, 0; done < n; batch *= 2 {
		batch = min(batch, n-done)
		errs := make([]error, batch)
		var wg sync.WaitGroup
		for i := range batch {
			ix := unknownIndex
			if indexes != nil {
				ix = indexes[done+i]
			}
			wg.Go(func() {
				if errs[i] = c.createPod(ctx, jc, ix); errs[i] == nil {
					created.Add(1)
				} else {
					c.exp.creationObserved(jc.key) // never going to arrive
				}
			})
		}
		wg.Wait()
		done += batch
		for _, err := range errs {
			if err != nil && firstErr == nil {
				firstErr = err
			}
		}
		if firstErr != nil {
			for range n - done {
				c.exp.creationObserved(jc.key) // skipped: retried next sync
			}
			break
		}
	}
	return int(created.Load()), firstErr
}

// createPod creates one pod of the Job.
func (c *Controller) createPod(ctx context.Context, jc *syncContext, index int) error {
	pod := newPod(jc, index)
	if err := c.client.Create(ctx, client.Pods, jc.job.Namespace, pod, pod); err != nil {
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil // the namespace is going, and the Job with it
		}
		c.rec.Event(jc.job, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating: %v", err)
		return fmt.Errorf("create pod for %s: %w", jc.key, err)
	}
	c.log.Info("job sync: created pod", "job", jc.key, "pod", client.KeyOf(pod), "index", index)
	c.rec.Event(jc.job, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created pod: %s", pod.Name)
	return nil
}

// newPod is a pod of the Job: its template, the tracking finalizer, and a
// controller ownerReference to the Job (which also lets the garbage
// collector delete it with the Job). A pod of an Indexed Job also gets
// its index (annotation, label, $JOB_COMPLETION_INDEX) and the hostname
// <job>-<index>, stable across retries, so that with a headless Service
// as spec.subdomain the pods can reach one another by name; with
// backoffLimitPerIndex, the failure counts of the pod it replaces.
func newPod(jc *syncContext, index int) *corev1.Pod {
	job := jc.job
	t := job.Spec.Template.DeepCopy()
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	generateName := job.Name + "-"
	if index != unknownIndex {
		addIndexEnv(&t.Spec)
		t.Annotations[batchv1.JobCompletionIndexAnnotation] = strconv.Itoa(index)
		t.Labels[batchv1.JobCompletionIndexAnnotation] = strconv.Itoa(index)
		t.Spec.Hostname = fmt.Sprintf("%s-%d", job.Name, index)
		generateName = generateNameWithIndex(job.Name, index)
		if hasBackoffLimitPerIndex(job) {
			counted, ignored := nextIndexFailureCounts(job, jc.podsWithDelayedDeletionPerIndex[index])
			t.Annotations[batchv1.JobIndexFailureCountAnnotation] = strconv.Itoa(int(counted))
			if ignored > 0 {
				t.Annotations[batchv1.JobIndexIgnoredFailureCountAnnotation] = strconv.Itoa(int(ignored))
			}
		}
	}
	if len(t.Annotations) == 0 {
		t.Annotations = nil
	}
	finalizers := t.Finalizers
	if !slices.Contains(finalizers, batchv1.JobTrackingFinalizer) {
		finalizers = append(finalizers, batchv1.JobTrackingFinalizer)
	}
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: generateName, Namespace: job.Namespace,
			Labels: t.Labels, Annotations: t.Annotations, Finalizers: finalizers,
			OwnerReferences: append(t.OwnerReferences, *metav1.NewControllerRef(job, controllerKind)),
		},
		Spec: t.Spec,
	}
}

// addIndexEnv gives every container JOB_COMPLETION_INDEX, read from the
// pod's index label by the kubelet (a downward API field).
func addIndexEnv(spec *corev1.PodSpec) {
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			if hasEnv(list[i].Env, completionIndexEnv) {
				continue
			}
			list[i].Env = append(list[i].Env, corev1.EnvVar{Name: completionIndexEnv, ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{FieldPath: fmt.Sprintf("metadata.labels['%s']", batchv1.JobCompletionIndexAnnotation)}}})
		}
	}
}

func hasEnv(env []corev1.EnvVar, name string) bool {
	for _, e := range env {
		if e.Name == name {
			return true
		}
	}
	return false
}

// generateNameWithIndex is "<job>-<index>-", the job name cut short if
// need be so that the index always fits.
func generateNameWithIndex(jobName string, index int) string {
	suffix := "-" + strconv.Itoa(index) + "-"
	if prefix := jobName + suffix; len(prefix) <= maxGeneratedNameLength {
		return prefix
	}
	return jobName[:maxGeneratedNameLength-len(suffix)] + suffix
}

// deleteSome removes the tracking finalizer of pods and deletes them (a
// suspended Job, too many pods): they need not be counted, having not
// finished. It returns the active count left.
func (c *Controller) deleteSome(ctx context.Context, jc *syncContext, pods []*corev1.Pod) (int32, error) {
	active := int32(len(jc.activePods))
	if len(pods) == 0 {
		return active, nil
	}
	c.exp.expect(jc.key, 0, len(pods))
	deletedReady, deleted, err := c.deletePods(ctx, jc.job, pods, true)
	jc.terminating += deleted
	jc.ready -= deletedReady
	return active - deleted, err
}

// deleteActivePods deletes the active pods of a Job that has ended,
// keeping their finalizers: they are counted (as failed) before they go.
func (c *Controller) deleteActivePods(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod) (int32, int32, error) {
	return c.deletePods(ctx, job, pods, false)
}

// deletePods deletes pods, all at once, first removing their tracking
// finalizer if dropFinalizer, and returns how many of them were ready and
// how many were deleted, and the first error.
func (c *Controller) deletePods(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod, dropFinalizer bool) (int32, int32, error) {
	var ready, deleted atomic.Int32
	errs := make([]error, len(pods))
	var wg sync.WaitGroup
	key := client.KeyOf(job)
	for i, pod := range pods {
		wg.Go(func() {
			err := error(nil)
			if dropFinalizer {
				err = c.removeTrackingFinalizer(ctx, pod)
			}
			if err == nil {
				err = c.client.Delete(ctx, client.Pods, pod.Namespace, pod.Name, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}})
			}
			switch {
			case err == nil:
				c.log.Info("job sync: deleted pod", "job", key, "pod", client.KeyOf(pod))
				c.rec.Event(job, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted pod: %s", pod.Name)
			case apierrors.IsNotFound(err):
				if dropFinalizer {
					c.exp.deletionObserved(key) // its event may never come
				}
			default:
				if dropFinalizer {
					c.exp.deletionObserved(key) // never going to arrive
				}
				c.rec.Event(job, corev1.EventTypeWarning, ReasonFailedDelete, "Error deleting: %v", err)
				errs[i] = fmt.Errorf("delete pod %s: %w", client.KeyOf(pod), err)
				return
			}
			deleted.Add(1)
			if podcondition.IsReady(pod) {
				ready.Add(1)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return ready.Load(), deleted.Load(), err
		}
	}
	return ready.Load(), deleted.Load(), nil
}
