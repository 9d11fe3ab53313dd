// Package ttlafterfinished is the TTL-after-finished controller: it
// deletes a finished Job (Complete or Failed) spec.ttlSecondsAfterFinished
// seconds after it finished, with its pods, so that finished Jobs do not
// pile up. `ttlSecondsAfterFinished: 0` deletes a Job as soon as it ends.
//
// Pipeline: Job informer handlers → queue of Job keys → Run → workers →
// sync. sync computes when the Job expires (the time its Complete or
// Failed condition became True, plus the TTL); before then it requeues
// the key for that moment, after it reads the Job from the server once
// more (the TTL or the Job may have changed) and deletes it with
// propagationPolicy Foreground, so the Job is gone only after its pods.
//
// It all lives in controller.go: New registers the informer handlers, Run
// runs the workers until ctx ends, sync does one item.
package ttlafterfinished

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
)

// ControllerName is the name the controller manager runs this controller
// by, and the key of its service account
// (bootstrappolicy.ControllerServiceAccounts).
const ControllerName = "ttl-after-finished-controller"

// logName tags its log lines (controller=ttl-after-finished): the shorter form its
// log has always shown.
const logName = "ttl-after-finished"

// DefaultWorkers is kube-controller-manager's
// --concurrent-ttl-after-finished-syncs.
const DefaultWorkers = 5

// Options tune the controller: Workers, 0 meaning DefaultWorkers.
type Options = controller.Options

// Controller deletes finished Jobs whose TTL is up.
type Controller struct {
	client  *client.Client
	jobs    *client.Informer
	queue   *workqueue.Queue[string] // Job keys, "namespace/name"
	workers int
	log     *slog.Logger
	clock   clock.PassiveClock // "now", against which TTLs expire
}

// New is the controller on d's shared Job informer; it registers its
// handlers, so call it before the informers run.
func New(d controller.Deps, o Options) *Controller {
	c := &Controller{client: d.Client, jobs: d.Informers.For(client.Jobs), queue: workqueue.NewNamed[string](d.Clock, ControllerName, d.QueueMetrics),
		workers: o.WorkersOr(DefaultWorkers), log: d.Log.With("controller", logName), clock: d.Clock}
	c.jobs.AddHandler(client.Handler{OnAdd: c.enqueue, OnUpdate: func(_, obj runtime.Object) { c.enqueue(obj) }})
	return c
}

// enqueue queues a finished Job with a TTL, not already being deleted.
func (c *Controller) enqueue(obj runtime.Object) {
	if job := obj.(*batchv1.Job); job.DeletionTimestamp == nil && needsCleanup(job) {
		c.queue.Add(client.KeyOf(job))
	}
}

// Run starts the workers and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	client.RunWorkers(ctx, c.queue, c.workers, c.sync, c.log, "job", c.jobs)
}

// sync deletes the Job if its TTL is up, else requeues it for then.
func (c *Controller) sync(ctx context.Context, key string) error {
	obj, ok := c.jobs.Cache().Get(key)
	if !ok {
		return nil // gone already
	}
	job := obj.(*batchv1.Job)
	if expired, err := c.expired(key, job); err != nil || !expired {
		return err // a Job that says it finished but not when: retried
	}
	// The cache may be behind: the TTL could have been raised, or the
	// Job replaced. Check the server's copy before deleting anything.
	fresh := &batchv1.Job{}
	if err := c.client.Get(ctx, client.Jobs, job.Namespace, job.Name, fresh); apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err // retried
	}
	if expired, err := c.expired(key, fresh); err != nil || !expired {
		return err
	}
	policy := metav1.DeletePropagationForeground
	err := c.client.Delete(ctx, client.Jobs, fresh.Namespace, fresh.Name, &metav1.DeleteOptions{
		PropagationPolicy: &policy, Preconditions: &metav1.Preconditions{UID: &fresh.UID}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete job %s: %w", key, err)
	}
	c.log.Info("deleted finished job: its TTL is up", "job", key, "ttlSecondsAfterFinished", *fresh.Spec.TTLSecondsAfterFinished)
	return nil
}

// expired reports whether the Job's TTL is up; if not yet, it requeues
// the key for when it will be.
func (c *Controller) expired(key string, job *batchv1.Job) (bool, error) {
	if job.DeletionTimestamp != nil || !needsCleanup(job) {
		return false, nil
	}
	finishedAt, err := finishTime(job)
	if err != nil {
		return false, err
	}
	now := c.clock.Now()
	if finishedAt.After(now) {
		c.log.Warn("job finished in the future: clock skew in the cluster; its cleanup waits", "job", key, "finishedAt", finishedAt)
	}
	left := finishedAt.Add(time.Duration(*job.Spec.TTLSecondsAfterFinished) * time.Second).Sub(now)
	if left > 0 {
		c.queue.AddAfter(key, left)
		return false, nil
	}
	return true, nil
}

// needsCleanup: a TTL is set and the Job has finished.
func needsCleanup(job *batchv1.Job) bool {
	return job.Spec.TTLSecondsAfterFinished != nil && finishedCondition(job) != nil
}

func finishedCondition(job *batchv1.Job) *batchv1.JobCondition {
	for i, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

// finishTime is when the Job finished: its final condition's transition.
func finishTime(job *batchv1.Job) (time.Time, error) {
	c := finishedCondition(job)
	if c == nil {
		return time.Time{}, fmt.Errorf("unable to find the status of the finished Job %s", client.KeyOf(job))
	}
	if c.LastTransitionTime.IsZero() {
		return time.Time{}, errors.New("unable to find the time when the Job " + client.KeyOf(job) + " finished")
	}
	return c.LastTransitionTime.Time, nil
}
