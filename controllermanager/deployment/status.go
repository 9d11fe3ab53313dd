package deployment

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mkube/mkube/client"
)

// updateStatus sums the ReplicaSets' counts into what `kubectl get deploy`
// shows (READY, UP-TO-DATE, AVAILABLE) and what `kubectl rollout status`
// waits for: observedGeneration, updatedReplicas, availableReplicas.
func (c *Controller) updateStatus(ctx context.Context, d *appsv1.Deployment, newRS *appsv1.ReplicaSet, all []*appsv1.ReplicaSet) error {
	st := appsv1.DeploymentStatus{ObservedGeneration: d.Generation, CollisionCount: d.Status.CollisionCount,
		UpdatedReplicas: newRS.Status.Replicas}
	for _, rs := range all {
		st.Replicas += rs.Status.Replicas
		st.ReadyReplicas += rs.Status.ReadyReplicas
		st.AvailableReplicas += rs.Status.AvailableReplicas
	}
	want := *d.Spec.Replicas
	st.UnavailableReplicas = max(0, want-st.AvailableReplicas)

	now := metav1.Now()
	available := st.AvailableReplicas >= want-int32(maxUnavailable(d))
	st.Conditions = setCondition(d.Status.Conditions, condition(appsv1.DeploymentAvailable, available, now,
		map[bool]string{true: "MinimumReplicasAvailable", false: "MinimumReplicasUnavailable"},
		map[bool]string{true: "Deployment has minimum availability.", false: "Deployment does not have minimum availability."}))
	complete := st.UpdatedReplicas == want && st.Replicas == want && st.AvailableReplicas == want
	progressing := condition(appsv1.DeploymentProgressing, true, now,
		map[bool]string{true: "NewReplicaSetAvailable", false: "ReplicaSetUpdated"},
		map[bool]string{true: fmt.Sprintf("ReplicaSet %q has successfully progressed.", newRS.Name),
			false: fmt.Sprintf("ReplicaSet %q is progressing.", newRS.Name)})
	if !complete {
		progressing.Reason, progressing.Message = "ReplicaSetUpdated", fmt.Sprintf("ReplicaSet %q is progressing.", newRS.Name)
	}
	st.Conditions = setCondition(st.Conditions, progressing)

	if equality.Semantic.DeepEqual(withoutTimes(st), withoutTimes(d.Status)) {
		return nil
	}
	next := d.DeepCopy()
	next.Status = st
	if d.Annotations[revisionAnnotation] != newRS.Annotations[revisionAnnotation] {
		// The revision annotation is metadata; the status subresource
		// would drop it, so it goes through the main resource first.
		patched, err := c.patchRevision(ctx, d, newRS.Annotations[revisionAnnotation])
		if err != nil {
			return err
		}
		next.ResourceVersion = patched.ResourceVersion // our own write is not a conflict
	}
	if err := c.client.UpdateStatus(ctx, client.Deployments, d.Namespace, d.Name, next, nil); err != nil {
		return fmt.Errorf("update status of %s: %w", client.KeyOf(d), err)
	}
	c.log.Info("updated status", "deployment", client.KeyOf(d), "replicas", st.Replicas, "updated", st.UpdatedReplicas,
		"ready", st.ReadyReplicas, "available", st.AvailableReplicas)
	return nil
}

func (c *Controller) patchRevision(ctx context.Context, d *appsv1.Deployment, rev string) (*appsv1.Deployment, error) {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, revisionAnnotation, rev)
	out := &appsv1.Deployment{}
	if err := c.client.Patch(ctx, client.Deployments, d.Namespace, d.Name, "application/merge-patch+json", []byte(patch), out); err != nil {
		return nil, fmt.Errorf("annotate revision of %s: %w", client.KeyOf(d), err)
	}
	return out, nil
}

// maxUnavailable resolves spec.strategy.rollingUpdate.maxUnavailable (25%
// by default, rounded down).
func maxUnavailable(d *appsv1.Deployment) int {
	if d.Spec.Strategy.RollingUpdate == nil || d.Spec.Strategy.RollingUpdate.MaxUnavailable == nil {
		return 0
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(d.Spec.Strategy.RollingUpdate.MaxUnavailable, int(*d.Spec.Replicas), false)
	if err != nil {
		return 0
	}
	return n
}

func condition(t appsv1.DeploymentConditionType, ok bool, now metav1.Time, reasons, messages map[bool]string) appsv1.DeploymentCondition {
	status := corev1.ConditionFalse
	if ok {
		status = corev1.ConditionTrue
	}
	return appsv1.DeploymentCondition{Type: t, Status: status, Reason: reasons[ok], Message: messages[ok],
		LastUpdateTime: now, LastTransitionTime: now}
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

// withoutTimes drops condition timestamps for comparison, so a status that
// only differs in "now" is not rewritten.
func withoutTimes(st appsv1.DeploymentStatus) appsv1.DeploymentStatus {
	st = *st.DeepCopy()
	for i := range st.Conditions {
		st.Conditions[i].LastUpdateTime, st.Conditions[i].LastTransitionTime = metav1.Time{}, metav1.Time{}
	}
	return st
}
