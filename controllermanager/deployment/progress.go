package deployment

import (
	"context"
	"fmt"
	"math"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
)

// The Progressing condition tells whether a rollout moves (Kubernetes'
// progress.go). Its reasons, as `kubectl describe deploy` shows them:
const (
	reasonNewRSCreated   = "NewReplicaSetCreated"     // True: the rollout has just created its ReplicaSet
	reasonRSUpdated      = "ReplicaSetUpdated"        // True: the last sync saw progress
	reasonNewRSAvailable = "NewReplicaSetAvailable"   // True: the rollout is complete
	reasonTimedOut       = "ProgressDeadlineExceeded" // False: no progress for progressDeadlineSeconds
	reasonPaused         = "DeploymentPaused"         // Unknown: spec.paused, nothing rolls out
	reasonResumed        = "DeploymentResumed"        // Unknown: unpaused, the deadline starts afresh
)

// A rollout "progresses" when, compared with the status written before,
// more pods are up to date, fewer old ones remain, or more are ready or
// available. Each time it does, the condition's lastUpdateTime moves; if
// it has not moved for spec.progressDeadlineSeconds (600 by default) the
// condition turns False with ProgressDeadlineExceeded, and `kubectl
// rollout status` fails with "exceeded its progress deadline". Nothing
// else happens to the rollout: it goes on if it can.

// syncRolloutStatus writes the status of a rollout step: the counts, the
// Available condition and the Progressing one. created says this sync
// created the new ReplicaSet. When nothing changed and the rollout is
// neither complete nor timed out, the Deployment is requeued for when its
// deadline would pass, since no event may come to check it then.
func (c *Controller) syncRolloutStatus(ctx context.Context, d *appsv1.Deployment, newRS *appsv1.ReplicaSet, all []*appsv1.ReplicaSet, created bool) error {
	now := c.clock.Now()
	st := calculateStatus(d, newRS, all, metav1.NewTime(now))
	st.Conditions = progressConditions(d, newRS, st, created, now)
	changed, err := c.writeStatus(ctx, d, newRS, st)
	if err != nil {
		return err
	}
	if !changed {
		c.requeueStuck(d, st, now)
	}
	return nil
}

// progressConditions returns st's conditions with Progressing set from
// what this sync saw, as Kubernetes' syncRolloutStatus does.
func progressConditions(d *appsv1.Deployment, newRS *appsv1.ReplicaSet, st appsv1.DeploymentStatus, created bool, now time.Time) []appsv1.DeploymentCondition {
	conds := st.Conditions
	if !hasProgressDeadline(d) {
		return removeCondition(conds, appsv1.DeploymentProgressing)
	}
	cur := getCondition(d.Status, appsv1.DeploymentProgressing)
	if st.Replicas == st.UpdatedReplicas && cur != nil && cur.Reason == reasonNewRSAvailable {
		return conds // a finished rollout, resynced: nothing to estimate
	}
	subject := fmt.Sprintf("Deployment %q", d.Name)
	if newRS != nil {
		subject = fmt.Sprintf("ReplicaSet %q", newRS.Name)
	}
	at := metav1.NewTime(now)
	set := func(status corev1.ConditionStatus, reason, message string) []appsv1.DeploymentCondition {
		return setCondition(conds, appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: status,
			Reason: reason, Message: message, LastUpdateTime: at, LastTransitionTime: at})
	}
	switch {
	case deploymentComplete(d, &st):
		return set(corev1.ConditionTrue, reasonNewRSAvailable, subject+" has successfully progressed.")
	case created:
		return set(corev1.ConditionTrue, reasonNewRSCreated, fmt.Sprintf("Created new replica set %q", newRS.Name))
	case progressed(d.Status, st):
		// Unlike setCondition, progress always moves lastUpdateTime,
		// even with the same reason and message: that time is what the
		// deadline is measured from.
		next := appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue,
			Reason: reasonRSUpdated, Message: subject + " is progressing.", LastUpdateTime: at, LastTransitionTime: at}
		if cur != nil && cur.Status == corev1.ConditionTrue {
			next.LastTransitionTime = cur.LastTransitionTime
		}
		return append(removeCondition(conds, appsv1.DeploymentProgressing), next)
	case timedOut(d, st, now):
		return set(corev1.ConditionFalse, reasonTimedOut, subject+" has timed out progressing.")
	}
	return conds
}

// progressed compares a new status with the one stored before it.
func progressed(before, after appsv1.DeploymentStatus) bool {
	return after.UpdatedReplicas > before.UpdatedReplicas ||
		after.Replicas-after.UpdatedReplicas < before.Replicas-before.UpdatedReplicas ||
		after.ReadyReplicas > before.ReadyReplicas ||
		after.AvailableReplicas > before.AvailableReplicas
}

// timedOut: the Progressing condition carried in st last moved more than
// progressDeadlineSeconds ago, and is not the one of a complete rollout.
func timedOut(d *appsv1.Deployment, st appsv1.DeploymentStatus, now time.Time) bool {
	cond := getCondition(st, appsv1.DeploymentProgressing)
	if !hasProgressDeadline(d) || cond == nil || cond.Reason == reasonNewRSAvailable {
		return false
	}
	if cond.Reason == reasonTimedOut {
		return true
	}
	return cond.LastUpdateTime.Add(progressDeadline(d)).Before(now)
}

// requeueStuck schedules a progress check for when the deadline would
// pass: lastUpdateTime + progressDeadlineSeconds - now, plus a second so
// the check does not land a few milliseconds early (Kubernetes'
// requeueStuckDeployment).
func (c *Controller) requeueStuck(d *appsv1.Deployment, st appsv1.DeploymentStatus, now time.Time) {
	cur := getCondition(d.Status, appsv1.DeploymentProgressing)
	if !hasProgressDeadline(d) || cur == nil || deploymentComplete(d, &st) || cur.Reason == reasonTimedOut {
		return
	}
	after := cur.LastUpdateTime.Add(progressDeadline(d)).Sub(now)
	key := client.KeyOf(d)
	if after < time.Second {
		c.queue.AddRateLimited(key)
		return
	}
	c.queue.AddAfter(key, after+time.Second)
}

// syncPausedCondition records `kubectl rollout pause` and `resume` in the
// Progressing condition (status Unknown), as Kubernetes'
// checkPausedConditions: "DeploymentPaused" when paused, and
// "DeploymentResumed" on resume, which also restarts the progress
// deadline. A timed-out condition is left as it is. It returns d, or the
// Deployment as the server stored it after the write.
func (c *Controller) syncPausedCondition(ctx context.Context, d *appsv1.Deployment) (*appsv1.Deployment, error) {
	if !hasProgressDeadline(d) {
		return d, nil
	}
	cur := getCondition(d.Status, appsv1.DeploymentProgressing)
	if cur != nil && cur.Reason == reasonTimedOut {
		return d, nil
	}
	markedPaused := cur != nil && cur.Reason == reasonPaused
	var reason, message string
	switch {
	case d.Spec.Paused && !markedPaused:
		reason, message = reasonPaused, "Deployment is paused"
	case !d.Spec.Paused && markedPaused:
		reason, message = reasonResumed, "Deployment is resumed"
	default:
		return d, nil
	}
	now := metav1.NewTime(c.clock.Now())
	next := d.DeepCopy()
	next.Status.Conditions = setCondition(next.Status.Conditions, appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing,
		Status: corev1.ConditionUnknown, Reason: reason, Message: message, LastUpdateTime: now, LastTransitionTime: now})
	out := &appsv1.Deployment{}
	if err := c.client.UpdateStatus(ctx, client.Deployments, d.Namespace, d.Name, next, out); err != nil {
		return nil, fmt.Errorf("record %s of %s: %w", reason, client.KeyOf(d), err)
	}
	c.log.Info("recorded pause state in the Progressing condition", "deployment", client.KeyOf(d), "reason", reason)
	return out, nil
}

// hasProgressDeadline: progressDeadlineSeconds is set and not "forever"
// (MaxInt32, what the old extensions/v1beta1 API defaulted to).
func hasProgressDeadline(d *appsv1.Deployment) bool {
	return d.Spec.ProgressDeadlineSeconds != nil && *d.Spec.ProgressDeadlineSeconds != math.MaxInt32
}

func progressDeadline(d *appsv1.Deployment) time.Duration {
	return time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second
}
