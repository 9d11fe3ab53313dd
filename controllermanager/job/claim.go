package job

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/controller"
)

// claimPods returns the pods the Job controls, after Kubernetes'
// ControllerRefManager rules (controller.PodClaim): an orphan the
// selector matches is adopted, given the ownerReference and the tracking
// finalizer, after a fresh read says the Job is not being deleted; an
// owned pod the selector no longer matches is released (how the
// conformance test takes a pod from a Job: it removes its labels).
// The returned pods are the cache's: read them, never change them.
func (c *Controller) claimPods(ctx context.Context, job *batchv1.Job) ([]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("job %s selector: %w", client.KeyOf(job), err)
	}
	return controller.PodClaim{Client: c.client, Pods: c.pods.Cache(), Owner: job, Kind: controllerKind, Selector: sel,
		CanAdopt:   controller.RecheckDeletion(c.client, client.Jobs, job),
		Finalizers: []string{batchv1.JobTrackingFinalizer}, Log: c.log}.Claim(ctx)
}
