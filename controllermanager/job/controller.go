// Package job is the Job controller: it runs a Job's pods until enough of
// them have succeeded (spec.completions), or until the Job has failed —
// too many failed pods (spec.backoffLimit), too long active
// (spec.activeDeadlineSeconds), or a failure its pod failure policy says
// is fatal. Where a ReplicaSet keeps pods running, a Job keeps count of
// how they end.
//
// Pipeline: informer handlers → queue of Job keys → Run → workers → sync.
// sync claims the Job's pods (adopting orphans its selector matches,
// releasing pods it no longer matches), decides whether the Job is done,
// creates or deletes pods towards spec.parallelism (manage.go), then
// counts the pods that ended (tracking.go): each pod carries the
// batch.kubernetes.io/job-tracking finalizer, so it cannot disappear
// before the controller has counted it; a finished pod's UID goes to
// status.uncountedTerminatedPods, its finalizer is removed, and only then
// it moves to status.succeeded or status.failed. A second queue removes
// the finalizer from pods whose Job is gone (orphans.go).
//
// Where things live:
//
//	file              what it holds
//	controller.go     the Controller: informers and handlers, the two queues, Run
//	sync.go           sync and decideEnd: the Job's state, whether it has reached its end, in Kubernetes' order
//	claim.go          the pods the Job controls, after adoption and release
//	manage.go         manageJob: create or delete pods towards spec.parallelism
//	tracking.go       trackStatus: uncountedTerminatedPods, the tracking finalizers, the counters
//	orphans.go        the second queue: the tracking finalizer of pods whose Job is gone
//	pods.go           small questions about pods: active, terminating, ready, finished, tracked
//	indexes.go        Indexed Jobs: each pod's completion index, the succeeded and failed indexes, backoffLimitPerIndex
//	backoff.go        the delay before replacing failed pods
//	failurepolicy.go  podFailurePolicy: what a failed pod means (FailJob, FailIndex, Ignore, Count)
//	successpolicy.go  successPolicy: when an Indexed Job has succeeded enough
//	conditions.go     the Job's conditions, their reasons and messages
//	expectations.go   the pod creations and deletions in flight, until the cache shows them
package job

import (
	"context"
	"log/slog"
	"reflect"
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
)

// ControllerName is the name the controller manager runs this controller
// by, and the key of its service account
// (bootstrappolicy.ControllerServiceAccounts).
const ControllerName = "job"

// EventComponent signs its events (source.component), as Kubernetes'
// controller signs them.
const EventComponent = "job-controller"

// The reasons of its events, as Kubernetes gives them.
const (
	ReasonTooManySucceededPods  = "TooManySucceededPods"
	ReasonCompleted             = "Completed"
	ReasonFailedCreate          = "FailedCreate"
	ReasonSuccessfulCreate      = "SuccessfulCreate"
	ReasonSuccessfulDelete      = "SuccessfulDelete"
	ReasonFailedDelete          = "FailedDelete"
	ReasonUnknownCompletionMode = "UnknownCompletionMode"
	ReasonSuspended             = "Suspended"
	ReasonResumed               = "Resumed"
)

// DefaultWorkers is kube-controller-manager's --concurrent-job-syncs.
const DefaultWorkers = 5

// syncBatchPeriod delays the sync a pod event asks for by a second, as
// Kubernetes does: a Job of a hundred pods that all start at once is
// synced once for the burst, not a hundred times. Changes to the Job's
// spec are synced at once.
const syncBatchPeriod = time.Second

// controllerKind is what the Job's pods name as their controller.
var controllerKind = batchv1.SchemeGroupVersion.WithKind("Job")

// Options tune the controller: Workers, 0 meaning DefaultWorkers.
type Options = controller.Options

// Controller runs every Job's pods to completion.
type Controller struct {
	client  *client.Client
	jobs    *client.Informer
	pods    *client.Informer
	queue   *workqueue.Queue[string]    // Job keys, "namespace/name"
	orphans *workqueue.Queue[orphanKey] // pods whose tracking finalizer may have to go
	workers int
	rec     *record.Recorder
	log     *slog.Logger
	clock   clock.PassiveClock

	// What the controller remembers between syncs of a Job, by its key.
	exp          *expectations // pod creations and deletions in flight
	finalizerExp *uidSets      // finalizer removals in flight
	backoff      *backoffStore // failures since the last success
	// finishedUIDs holds the Jobs this controller marked finished whose
	// update the informer has not delivered yet: syncing one on the old
	// cached copy would finish it a second time.
	finishedUIDs sync.Map // types.UID → struct{}
	// writtenRVs holds, by Job key, the resourceVersion of the last
	// status this controller wrote, until the cache has caught up with it.
	writtenRVs sync.Map // string → int64
}

// New is the Job controller on d's shared informers; it registers its
// handlers, so call it before they run.
func New(d controller.Deps, o Options) *Controller {
	jobs, pods := d.Informers.For(client.Jobs), d.Informers.For(client.Pods)
	c := &Controller{client: d.Client, jobs: jobs, pods: pods,
		queue: workqueue.NewNamed[string](d.Clock, ControllerName, d.QueueMetrics), orphans: workqueue.NewNamed[orphanKey](d.Clock, "job_orphan_pod", d.QueueMetrics),
		workers: o.WorkersOr(DefaultWorkers), rec: d.Recorder.WithComponent(EventComponent),
		log: d.Log.With("controller", ControllerName), clock: d.Clock,
		exp: newExpectations(d.Clock), finalizerExp: newUIDSets(), backoff: newBackoffStore()}
	pods.Cache().AddIndex(client.IndexByOwnerUID, client.OwnerUIDIndex)
	pods.Cache().AddIndex(client.IndexByNamespace, client.NamespaceIndex)
	jobs.Cache().AddIndex(client.IndexByNamespace, client.NamespaceIndex)
	jobs.AddHandler(client.Handler{OnAdd: c.jobAdded, OnUpdate: c.jobUpdated, OnDelete: c.jobDeleted})
	pods.AddHandler(client.Handler{OnAdd: c.podAdded, OnUpdate: c.podUpdated,
		OnDelete: func(obj runtime.Object) { c.podDeleted(obj.(*corev1.Pod), true) }})
	return c
}

// Run starts the workers of both queues and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { // returns when ctx ends
		client.RunWorkers(ctx, c.orphans, c.workers, c.syncOrphan, c.log, "orphan", c.jobs, c.pods)
	})
	client.RunWorkers(ctx, c.queue, c.workers, c.sync, c.log, "job", c.jobs, c.pods)
	wg.Wait()
}

func (c *Controller) enqueueNow(job *batchv1.Job) { c.queue.Add(client.KeyOf(job)) }
func (c *Controller) enqueueBatched(job *batchv1.Job) {
	c.queue.AddAfter(client.KeyOf(job), syncBatchPeriod)
}

// enqueueAfter syncs the Job again after d, and not before the batch
// period: a replacement pod delayed by the failure backoff.
func (c *Controller) enqueueAfter(job *batchv1.Job, d time.Duration) {
	c.queue.AddAfter(client.KeyOf(job), max(d, syncBatchPeriod))
}

func (c *Controller) jobAdded(obj runtime.Object) { c.enqueueNow(obj.(*batchv1.Job)) }

func (c *Controller) jobUpdated(oldObj, obj runtime.Object) {
	old, job := oldObj.(*batchv1.Job), obj.(*batchv1.Job)
	if isFinished(job) {
		// Our final status write came back: the cache can be trusted
		// again. Nothing more to run; any pod still holding a finalizer
		// lets go.
		c.finishedUIDs.Delete(job.UID)
		c.orphans.Add(orphanKey{namespace: job.Namespace, selector: selectorString(job)})
		return
	}
	if job.Generation == old.Generation {
		c.enqueueBatched(job) // our own status write, mostly
	} else {
		c.enqueueNow(job)
	}
	// A new activeDeadlineSeconds needs its own wake-up.
	if ads := job.Spec.ActiveDeadlineSeconds; job.Status.StartTime != nil && ads != nil &&
		(old.Spec.ActiveDeadlineSeconds == nil || *old.Spec.ActiveDeadlineSeconds != *ads) {
		left := time.Duration(*ads)*time.Second - c.clock.Since(job.Status.StartTime.Time)
		c.queue.AddAfter(client.KeyOf(job), left)
	}
}

// jobDeleted forgets the Job and frees the pods it leaves behind of their
// tracking finalizer.
func (c *Controller) jobDeleted(obj runtime.Object) {
	job := obj.(*batchv1.Job)
	c.enqueueNow(job)
	c.finishedUIDs.Delete(job.UID)
	c.orphans.Add(orphanKey{namespace: job.Namespace, selector: selectorString(job)})
	c.forget(client.KeyOf(job))
}

func (c *Controller) forget(key string) {
	c.writtenRVs.Delete(key)
	c.exp.forget(key)
	c.finalizerExp.forget(key)
	c.backoff.forget(key)
}

// resolveControllerRef returns the cached Job ref names, if it is still
// the same Job (same UID).
func (c *Controller) resolveControllerRef(namespace string, ref *metav1.OwnerReference) *batchv1.Job {
	if ref == nil || ref.Kind != controllerKind.Kind {
		return nil
	}
	obj, ok := c.jobs.Cache().Get(namespace + "/" + ref.Name)
	if !ok || obj.(*batchv1.Job).UID != ref.UID {
		return nil
	}
	return obj.(*batchv1.Job)
}

// selectingJobs are the Jobs whose selector matches an orphan pod: one of
// them may adopt it.
func (c *Controller) selectingJobs(pod *corev1.Pod) []*batchv1.Job {
	var out []*batchv1.Job
	for _, obj := range c.jobs.Cache().ByIndex(client.IndexByNamespace, pod.Namespace) {
		job := obj.(*batchv1.Job)
		if sel, err := metav1.LabelSelectorAsSelector(job.Spec.Selector); err == nil && !sel.Empty() && sel.Matches(labels.Set(pod.Labels)) {
			out = append(out, job)
		}
	}
	return out
}

// podAdded: a pod we created came back through the watch, or an orphan
// appeared that a Job may adopt.
func (c *Controller) podAdded(obj runtime.Object) {
	pod := obj.(*corev1.Pod)
	if pod.DeletionTimestamp != nil {
		// Seen for the first time already going (after a restart): not
		// one of our creations.
		c.podDeleted(pod, false)
		return
	}
	if ref := metav1.GetControllerOf(pod); ref != nil {
		if job := c.resolveControllerRef(pod.Namespace, ref); job != nil {
			c.exp.creationObserved(client.KeyOf(job))
			c.enqueueBatched(job)
		}
		return
	}
	if hasTrackingFinalizer(pod) {
		c.orphans.Add(orphanKey{namespace: pod.Namespace, name: pod.Name})
	}
	for _, job := range c.selectingJobs(pod) {
		c.enqueueBatched(job)
	}
}

func (c *Controller) podUpdated(oldObj, obj runtime.Object) {
	old, pod := oldObj.(*corev1.Pod), obj.(*corev1.Pod)
	if pod.ResourceVersion == old.ResourceVersion {
		return // a resync, not a change
	}
	if pod.DeletionTimestamp != nil {
		// A graceful deletion began: for counting, the pod is gone (and
		// the Job may replace it at once).
		c.podDeleted(pod, false)
		return
	}
	finalizerGone := !hasTrackingFinalizer(pod)
	ref, oldRef := metav1.GetControllerOf(pod), metav1.GetControllerOf(old)
	refChanged := !reflect.DeepEqual(ref, oldRef)
	if refChanged && oldRef != nil {
		if job := c.resolveControllerRef(old.Namespace, oldRef); job != nil {
			if finalizerGone {
				c.finalizerExp.remove(client.KeyOf(job), pod.UID)
			}
			c.enqueueBatched(job)
		}
	}
	if ref != nil {
		if job := c.resolveControllerRef(pod.Namespace, ref); job != nil {
			if finalizerGone {
				c.finalizerExp.remove(client.KeyOf(job), pod.UID)
			}
			c.enqueueBatched(job)
		}
		return
	}
	if hasTrackingFinalizer(pod) {
		c.orphans.Add(orphanKey{namespace: pod.Namespace, name: pod.Name})
	}
	if refChanged || !reflect.DeepEqual(pod.Labels, old.Labels) {
		for _, job := range c.selectingJobs(pod) {
			c.enqueueBatched(job)
		}
	}
}

// podDeleted: a pod went (final) or began to go. A pod of a live Job
// satisfies a deletion expectation; one of a Job that is gone or finished
// has its finalizer removed by the orphan queue.
func (c *Controller) podDeleted(pod *corev1.Pod, final bool) {
	ref := metav1.GetControllerOf(pod)
	job := c.resolveControllerRef(pod.Namespace, ref)
	if job == nil || isFinished(job) {
		if hasTrackingFinalizer(pod) {
			c.orphans.Add(orphanKey{namespace: pod.Namespace, name: pod.Name})
		}
		return
	}
	key := client.KeyOf(job)
	c.exp.deletionObserved(key)
	if final || !hasTrackingFinalizer(pod) {
		c.finalizerExp.remove(key, pod.UID)
	}
	c.enqueueBatched(job)
}

// markFinished remembers that job's final status was written.
func (c *Controller) markFinished(uid types.UID) { c.finishedUIDs.Store(uid, struct{}{}) }

func (c *Controller) markedFinished(uid types.UID) bool {
	_, ok := c.finishedUIDs.Load(uid)
	return ok
}

// wroteStatus remembers the resourceVersion of a status we wrote.
func (c *Controller) wroteStatus(key string, job *batchv1.Job) {
	if rv, err := strconv.ParseInt(job.ResourceVersion, 10, 64); err == nil {
		c.writtenRVs.Store(key, rv)
	}
}

// behindOwnWrite reports whether the cached Job is older than the last
// status this controller wrote for it. mkube's resourceVersions are etcd
// revisions, so they compare as numbers.
func (c *Controller) behindOwnWrite(key string, cached *batchv1.Job) bool {
	v, ok := c.writtenRVs.Load(key)
	if !ok {
		return false
	}
	rv, err := strconv.ParseInt(cached.ResourceVersion, 10, 64)
	if err != nil || rv >= v.(int64) {
		c.writtenRVs.CompareAndDelete(key, v)
		return false
	}
	return true
}

// selectorString is the Job's selector as a string, for the orphan queue.
func selectorString(job *batchv1.Job) string {
	sel, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
	if err != nil {
		return ""
	}
	return sel.String()
}
