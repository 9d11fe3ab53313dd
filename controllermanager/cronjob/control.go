package cronjob

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/client"
)

// api is every request the controller makes besides reading its caches,
// as Kubernetes' jobControlInterface and cjControlInterface: an interface
// so that the sync tests can answer them from memory.
type api interface {
	// GetCronJob reads a CronJob from the server, not the cache: to be
	// sure, before calling a Job unexpected, that status.active does not
	// name it in a version the cache has not seen yet.
	GetCronJob(ctx context.Context, namespace, name string) (*batchv1.CronJob, error)
	UpdateStatus(ctx context.Context, cj *batchv1.CronJob) (*batchv1.CronJob, error)
	// GetJob reads a Job from the server: a Job missing from the cache
	// may only be late through the watch.
	GetJob(ctx context.Context, namespace, name string) (*batchv1.Job, error)
	CreateJob(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error)
	DeleteJob(ctx context.Context, namespace, name string) error
}

// eventRecorder is the part of record.Recorder the controller uses.
type eventRecorder interface {
	Event(obj runtime.Object, eventType, reason, messageFmt string, args ...any)
}

// clientAPI is api over the REST client.
type clientAPI struct{ c *client.Client }

func (a clientAPI) GetCronJob(ctx context.Context, namespace, name string) (*batchv1.CronJob, error) {
	cj := &batchv1.CronJob{}
	return cj, a.c.Get(ctx, client.CronJobs, namespace, name, cj)
}

func (a clientAPI) UpdateStatus(ctx context.Context, cj *batchv1.CronJob) (*batchv1.CronJob, error) {
	out := &batchv1.CronJob{}
	return out, a.c.UpdateStatus(ctx, client.CronJobs, cj.Namespace, cj.Name, cj, out)
}

func (a clientAPI) GetJob(ctx context.Context, namespace, name string) (*batchv1.Job, error) {
	job := &batchv1.Job{}
	return job, a.c.Get(ctx, client.Jobs, namespace, name, job)
}

func (a clientAPI) CreateJob(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error) {
	out := &batchv1.Job{}
	return out, a.c.Create(ctx, client.Jobs, job.Namespace, job, out)
}

// DeleteJob deletes in the background: the Job goes at once, and the
// garbage collector deletes its pods after it, as Kubernetes' cronjob
// controller asks.
func (a clientAPI) DeleteJob(ctx context.Context, namespace, name string) error {
	background := metav1.DeletePropagationBackground
	return a.c.Delete(ctx, client.Jobs, namespace, name, &metav1.DeleteOptions{PropagationPolicy: &background})
}
