// Package cronjob is the CronJob controller (Kubernetes' cronjob
// controller v2): at each time of a CronJob's spec.schedule it creates a
// Job from spec.jobTemplate, and the job controller runs that Job's pods.
//
// Pipeline: informer handlers → queue of CronJob keys → Run → workers →
// sync. sync reads the CronJob and the Jobs it controls from the caches,
// drops finished Jobs from status.active and deletes those beyond the
// history limits, creates the Job of the most recent schedule time not yet
// run (honouring suspend, startingDeadlineSeconds and concurrencyPolicy),
// writes status, and puts the key back in the queue to wake just after the
// next schedule time (the queue's AddAfter on the injected clock). Nothing
// polls: between schedule times, only a change to the CronJob or one of
// its Jobs wakes it.
//
// Where things live:
//
//	file           what it holds
//	controller.go  the Controller: its informers' handlers, the queue, Run
//	sync.go        sync: clean up, run what is due (suspend, startingDeadlineSeconds, concurrencyPolicy), write status, requeue for the next time
//	schedule.go    the most recent schedule time not yet run, and how many were missed
//	job.go         the Job of one schedule time: its name, its template, whether it finished
//	history.go     the history limits: delete the oldest finished Jobs beyond them
//	control.go     api and eventRecorder, the requests the controller makes, behind interfaces its tests fake
package cronjob

import (
	"context"
	"log/slog"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/internal/cronschedule"
)

// ControllerName is the name the controller manager runs this controller
// by, and the key of its service account
// (bootstrappolicy.ControllerServiceAccounts).
const ControllerName = "cronjob"

// EventComponent signs its events (source.component), as Kubernetes'
// controller signs them.
const EventComponent = "cronjob-controller"

// The reasons of its events, as Kubernetes gives them.
const (
	ReasonUnParseableCronJobSchedule = "UnParseableCronJobSchedule"
	ReasonUnexpectedJob              = "UnexpectedJob"
	ReasonSawCompletedJob            = "SawCompletedJob"
	ReasonMissingJob                 = "MissingJob"
	ReasonUnknownTimeZone            = "UnknownTimeZone"
	ReasonUnparseableSchedule        = "UnparseableSchedule"
	ReasonInvalidSchedule            = "InvalidSchedule"
	ReasonMissSchedule               = "MissSchedule"
	ReasonJobAlreadyActive           = "JobAlreadyActive"
	ReasonFailedGet                  = "FailedGet"
	ReasonFailedCreate               = "FailedCreate"
	ReasonSuccessfulCreate           = "SuccessfulCreate"
	ReasonUnsupportedSchedule        = "UnsupportedSchedule"
	ReasonTooManyMissedTimes         = "TooManyMissedTimes"
	ReasonFailedDelete               = "FailedDelete"
	ReasonSuccessfulDelete           = "SuccessfulDelete"
)

// DefaultWorkers is kube-controller-manager's --concurrent-cron-job-syncs.
const DefaultWorkers = 5

// Options tune the controller: Workers, 0 meaning DefaultWorkers.
type Options = controller.Options

// Controller creates the Jobs of every CronJob on schedule.
type Controller struct {
	api      api
	cronJobs *client.Informer
	jobs     *client.Informer
	queue    *workqueue.Queue[string] // CronJob keys, "namespace/name"
	workers  int
	rec      eventRecorder
	log      *slog.Logger
	clock    clock.PassiveClock // "now" for every schedule computation

	// wakeups is, per CronJob, the time its pending AddAfter fires: the
	// queue keeps every timer it is given, and each sync asks for one, so
	// without this a CronJob whose Jobs change often would pile up timers
	// for the same time (client-go's delaying queue keeps only the
	// earliest; this does the same).
	mu      sync.Mutex
	wakeups map[string]time.Time
}

// New is the CronJob controller on d's shared informers; it registers its
// handlers, so call it before they run.
func New(d controller.Deps, o Options) *Controller {
	return newController(d, o, clientAPI{d.Client}, d.Recorder.WithComponent(EventComponent))
}

func newController(d controller.Deps, o Options, a api, rec eventRecorder) *Controller {
	c := &Controller{api: a, cronJobs: d.Informers.For(client.CronJobs), jobs: d.Informers.For(client.Jobs),
		queue: workqueue.NewNamed[string](d.Clock, ControllerName, d.QueueMetrics), workers: o.WorkersOr(DefaultWorkers), rec: rec,
		log: d.Log.With("controller", ControllerName), clock: d.Clock, wakeups: map[string]time.Time{}}
	c.jobs.Cache().AddIndex(client.IndexByOwnerUID, client.OwnerUIDIndex)
	c.cronJobs.AddHandler(client.Handler{OnAdd: c.enqueue, OnUpdate: c.cronJobUpdated, OnDelete: c.enqueue})
	c.jobs.AddHandler(client.Handler{OnAdd: c.jobChanged, OnUpdate: c.jobUpdated, OnDelete: c.jobChanged})
	return c
}

// Run starts the workers and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	client.RunWorkers(ctx, c.queue, c.workers, c.sync, c.log, "cronjob", c.cronJobs, c.jobs)
}

func (c *Controller) enqueue(obj runtime.Object) { c.queue.Add(client.KeyOf(obj)) }

// enqueueAfter wakes the CronJob after d, unless a wake-up at or before
// that time is already pending.
func (c *Controller) enqueueAfter(key string, d time.Duration) {
	now := c.clock.Now()
	at := now.Add(d)
	c.mu.Lock()
	if t, ok := c.wakeups[key]; ok && t.After(now) && !t.After(at) {
		c.mu.Unlock()
		return
	}
	c.wakeups[key] = at
	c.mu.Unlock()
	c.queue.AddAfter(key, d)
}

// forget drops a deleted CronJob's pending wake-up time.
func (c *Controller) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.wakeups, key)
}

// cronJobUpdated: a new schedule or time zone moves the next run, so the
// CronJob is woken at its new next time; any other change (suspend,
// concurrencyPolicy, the template) is looked at now.
func (c *Controller) cronJobUpdated(oldObj, obj runtime.Object) {
	old, cj := oldObj.(*batchv1.CronJob), obj.(*batchv1.CronJob)
	if old.Spec.Schedule == cj.Spec.Schedule && ptr.Equal(old.Spec.TimeZone, cj.Spec.TimeZone) {
		c.enqueue(cj)
		return
	}
	sched, err := cronschedule.Parse(cronschedule.InTimeZone(cj.Spec.Schedule, cj.Spec.TimeZone))
	if err != nil {
		// The API server validates schedules, so this is a CronJob from
		// before a rule existed; nothing runs until its spec is fixed.
		c.log.Warn("cronjob: unparseable schedule, not syncing until it changes", "cronjob", client.KeyOf(cj), "schedule", cj.Spec.Schedule, "err", err)
		c.rec.Event(cj, corev1.EventTypeWarning, ReasonUnParseableCronJobSchedule, "unparseable schedule for cronjob: %s", cj.Spec.Schedule)
		return
	}
	d := nextScheduleDelay(cj, c.clock.Now(), sched)
	c.log.Info("cronjob: schedule changed, next sync", "cronjob", client.KeyOf(cj), "schedule", cj.Spec.Schedule, "in", d)
	c.enqueueAfter(client.KeyOf(cj), d)
}

// ownerKey returns the key of the CronJob controlling job, if it is in
// the cache with the UID the reference names (not a namesake created
// since).
func (c *Controller) ownerKey(job *batchv1.Job) (string, bool) {
	ref := metav1.GetControllerOf(job)
	if ref == nil || ref.Kind != cronJobKind.Kind {
		return "", false
	}
	key := job.Namespace + "/" + ref.Name
	obj, ok := c.cronJobs.Cache().Get(key)
	if !ok || obj.(*batchv1.CronJob).UID != ref.UID {
		return "", false
	}
	return key, true
}

// jobChanged: a Job of a CronJob appeared, went, or (jobUpdated) changed,
// finishing perhaps; its CronJob updates status.active.
func (c *Controller) jobChanged(obj runtime.Object) {
	if key, ok := c.ownerKey(obj.(*batchv1.Job)); ok {
		c.queue.Add(key)
	}
}

func (c *Controller) jobUpdated(oldObj, obj runtime.Object) {
	old, job := oldObj.(*batchv1.Job), obj.(*batchv1.Job)
	if old.ResourceVersion == job.ResourceVersion {
		return // a relist that changed nothing
	}
	if oldKey, ok := c.ownerKey(old); ok {
		if key, _ := c.ownerKey(job); key != oldKey {
			c.queue.Add(oldKey) // released by its CronJob
		}
	}
	c.jobChanged(job)
}
