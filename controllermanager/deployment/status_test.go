package deployment

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSetCondition(t *testing.T) {
	// Fixed instants instead of the clock: setCondition only compares and
	// copies the times it is given.
	t0 := metav1.NewTime(time.Date(2025, 1, 1, 10, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	cond := func(typ appsv1.DeploymentConditionType, status corev1.ConditionStatus, reason string, at metav1.Time) appsv1.DeploymentCondition {
		return appsv1.DeploymentCondition{Type: typ, Status: status, Reason: reason, Message: reason + ".",
			LastUpdateTime: at, LastTransitionTime: at}
	}
	const (
		available   = appsv1.DeploymentAvailable
		progressing = appsv1.DeploymentProgressing
		yes, no     = corev1.ConditionTrue, corev1.ConditionFalse
	)
	for _, tc := range []struct {
		name string
		have []appsv1.DeploymentCondition
		set  appsv1.DeploymentCondition
		want []appsv1.DeploymentCondition
	}{
		{name: "the first condition of a type is added with the new times",
			set:  cond(available, yes, "MinimumReplicasAvailable", t1),
			want: []appsv1.DeploymentCondition{cond(available, yes, "MinimumReplicasAvailable", t1)}},
		{name: "an unchanged condition keeps both its transition and its update time",
			have: []appsv1.DeploymentCondition{cond(available, yes, "MinimumReplicasAvailable", t0)},
			set:  cond(available, yes, "MinimumReplicasAvailable", t1),
			want: []appsv1.DeploymentCondition{cond(available, yes, "MinimumReplicasAvailable", t0)}},
		{name: "a new reason with the same status keeps the transition time but takes the new update time",
			have: []appsv1.DeploymentCondition{cond(progressing, yes, "ReplicaSetUpdated", t0)},
			set:  cond(progressing, yes, "NewReplicaSetAvailable", t1),
			want: []appsv1.DeploymentCondition{{Type: progressing, Status: yes, Reason: "NewReplicaSetAvailable",
				Message: "NewReplicaSetAvailable.", LastUpdateTime: t1, LastTransitionTime: t0}}},
		{name: "a status change takes the new transition time",
			have: []appsv1.DeploymentCondition{cond(available, no, "MinimumReplicasUnavailable", t0)},
			set:  cond(available, yes, "MinimumReplicasAvailable", t1),
			want: []appsv1.DeploymentCondition{cond(available, yes, "MinimumReplicasAvailable", t1)}},
		{name: "conditions of other types are kept untouched",
			have: []appsv1.DeploymentCondition{cond(available, yes, "MinimumReplicasAvailable", t0), cond(progressing, yes, "ReplicaSetUpdated", t0)},
			set:  cond(progressing, no, "ProgressDeadlineExceeded", t1),
			want: []appsv1.DeploymentCondition{cond(available, yes, "MinimumReplicasAvailable", t0), cond(progressing, no, "ProgressDeadlineExceeded", t1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			have := append([]appsv1.DeploymentCondition(nil), tc.have...)
			got := setCondition(have, tc.set)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d conditions, want %d: %+v", len(got), len(tc.want), got)
			}
			for i := range got {
				g, w := got[i], tc.want[i]
				if g.Type != w.Type || g.Status != w.Status || g.Reason != w.Reason || g.Message != w.Message ||
					!g.LastUpdateTime.Equal(&w.LastUpdateTime) || !g.LastTransitionTime.Equal(&w.LastTransitionTime) {
					t.Errorf("condition %d:\n got %+v\nwant %+v", i, g, w)
				}
			}
			for i := range tc.have {
				if have[i] != tc.have[i] {
					t.Errorf("setCondition changed its input condition %d: %+v", i, have[i])
				}
			}
		})
	}
}
