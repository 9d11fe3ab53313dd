package deployment

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
)

// calculateStatus sums the ReplicaSets' counts into what `kubectl get
// deploy` shows (READY, UP-TO-DATE, AVAILABLE) and what `kubectl rollout
// status` waits for (observedGeneration, updatedReplicas,
// availableReplicas), and sets the Available condition: True while
// availableReplicas ≥ spec.replicas - maxUnavailable. newRS may be nil (a
// paused Deployment whose template changed): nothing is up to date then.
// The Progressing condition is carried over; progress.go sets it.
func calculateStatus(d *appsv1.Deployment, newRS *appsv1.ReplicaSet, all []*appsv1.ReplicaSet, now metav1.Time) appsv1.DeploymentStatus {
	st := appsv1.DeploymentStatus{ObservedGeneration: d.Generation, CollisionCount: d.Status.CollisionCount}
	if newRS != nil {
		st.UpdatedReplicas = newRS.Status.Replicas
	}
	for _, rs := range all {
		st.Replicas += rs.Status.Replicas
		st.ReadyReplicas += rs.Status.ReadyReplicas
		st.AvailableReplicas += rs.Status.AvailableReplicas
	}
	// As Kubernetes: the pods asked for (mid-rollout, with the surge) that
	// are not available.
	st.UnavailableReplicas = max(0, specReplicas(all)-st.AvailableReplicas)

	available := st.AvailableReplicas >= *d.Spec.Replicas-maxUnavailable(d)
	st.Conditions = setCondition(d.Status.Conditions, condition(appsv1.DeploymentAvailable, available, now,
		map[bool]string{true: "MinimumReplicasAvailable", false: "MinimumReplicasUnavailable"},
		map[bool]string{true: "Deployment has minimum availability.", false: "Deployment does not have minimum availability."}))
	return st
}

// syncDeploymentStatus writes the counts and the Available condition,
// leaving Progressing as it is: the status of a paused Deployment, or of a
// scaling event, where no rollout progresses.
func (c *Controller) syncDeploymentStatus(ctx context.Context, d *appsv1.Deployment, newRS *appsv1.ReplicaSet, all []*appsv1.ReplicaSet) error {
	_, err := c.writeStatus(ctx, d, newRS, calculateStatus(d, newRS, all, metav1.NewTime(c.clock.Now())))
	return err
}

// writeStatus stores st and the new ReplicaSet's revision on the
// Deployment, if either changed; changed reports whether status did.
func (c *Controller) writeStatus(ctx context.Context, d *appsv1.Deployment, newRS *appsv1.ReplicaSet, st appsv1.DeploymentStatus) (changed bool, err error) {
	next := d.DeepCopy()
	if newRS != nil && d.Annotations[revisionAnnotation] != newRS.Annotations[revisionAnnotation] {
		// The revision annotation is metadata; the status subresource
		// would drop it, so it goes through the main resource first.
		patched, err := c.patchRevision(ctx, d, newRS.Annotations[revisionAnnotation])
		if err != nil {
			return false, err
		}
		next.ResourceVersion = patched.ResourceVersion // our own write is not a conflict
	}
	if equality.Semantic.DeepEqual(withoutTimes(st), withoutTimes(d.Status)) {
		return false, nil
	}
	next.Status = st
	err = c.client.UpdateStatus(ctx, client.Deployments, d.Namespace, d.Name, next, nil)
	if apierrors.IsConflict(err) {
		// Usually our cache is behind our own previous status write. The
		// counts come from the ReplicaSets, not from the stored status, so
		// unless the spec changed meanwhile, retry once on the fresh object.
		fresh := &appsv1.Deployment{}
		if err = c.client.Get(ctx, client.Deployments, d.Namespace, d.Name, fresh); err == nil {
			if fresh.Generation != d.Generation {
				return false, nil // the new spec's event queues another sync
			}
			fresh.Status = st
			err = c.client.UpdateStatus(ctx, client.Deployments, d.Namespace, d.Name, fresh, nil)
		}
	}
	if err != nil {
		return false, fmt.Errorf("update status of %s: %w", client.KeyOf(d), err)
	}
	c.log.Info("updated status", "deployment", client.KeyOf(d), "replicas", st.Replicas, "updated", st.UpdatedReplicas,
		"ready", st.ReadyReplicas, "available", st.AvailableReplicas)
	return true, nil
}

// patchRevision writes the revision annotation with an update, as
// Kubernetes' controller does (its role, system:controller:deployment-
// controller, may update Deployments, not patch them); a conflict is
// retried by the sync, on the fresher object.
func (c *Controller) patchRevision(ctx context.Context, d *appsv1.Deployment, rev string) (*appsv1.Deployment, error) {
	next := d.DeepCopy()
	if next.Annotations == nil {
		next.Annotations = map[string]string{}
	}
	next.Annotations[revisionAnnotation] = rev
	out := &appsv1.Deployment{}
	if err := c.client.Update(ctx, client.Deployments, d.Namespace, d.Name, next, out); err != nil {
		return nil, fmt.Errorf("annotate revision of %s: %w", client.KeyOf(d), err)
	}
	return out, nil
}

// deploymentComplete: every replica runs the current template and is
// available, and the status describes the current spec. `kubectl rollout
// status` says "successfully rolled out" on the same counts.
func deploymentComplete(d *appsv1.Deployment, st *appsv1.DeploymentStatus) bool {
	want := *d.Spec.Replicas
	return st.UpdatedReplicas == want && st.Replicas == want && st.AvailableReplicas == want && st.ObservedGeneration >= d.Generation
}

func condition(t appsv1.DeploymentConditionType, ok bool, now metav1.Time, reasons, messages map[bool]string) appsv1.DeploymentCondition {
	status := corev1.ConditionFalse
	if ok {
		status = corev1.ConditionTrue
	}
	return appsv1.DeploymentCondition{Type: t, Status: status, Reason: reasons[ok], Message: messages[ok],
		LastUpdateTime: now, LastTransitionTime: now}
}

// getCondition finds the condition of type t, or nil.
func getCondition(st appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// setCondition replaces the condition of the same type, keeping its
// transition time when the status did not change.
func setCondition(conds []appsv1.DeploymentCondition, c appsv1.DeploymentCondition) []appsv1.DeploymentCondition {
	out := make([]appsv1.DeploymentCondition, 0, len(conds)+1)
	for _, have := range conds {
		if have.Type != c.Type {
			out = append(out, have)
			continue
		}
		if have.Status == c.Status {
			c.LastTransitionTime = have.LastTransitionTime
			if have.Reason == c.Reason && have.Message == c.Message {
				c.LastUpdateTime = have.LastUpdateTime
			}
		}
	}
	return append(out, c)
}

// removeCondition drops the condition of type t.
func removeCondition(conds []appsv1.DeploymentCondition, t appsv1.DeploymentConditionType) []appsv1.DeploymentCondition {
	var out []appsv1.DeploymentCondition
	for _, c := range conds {
		if c.Type != t {
			out = append(out, c)
		}
	}
	return out
}

// withoutTimes drops condition timestamps for comparison, so a status that
// only differs in "now" is not rewritten.
func withoutTimes(st appsv1.DeploymentStatus) appsv1.DeploymentStatus {
	st = *st.DeepCopy()
	for i := range st.Conditions {
		st.Conditions[i].LastUpdateTime, st.Conditions[i].LastTransitionTime = metav1.Time{}, metav1.Time{}
	}
	return st
}
