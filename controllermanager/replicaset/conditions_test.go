package replicaset

import (
	"errors"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestTheReplicaFailureConditionFollowsTheLastSync(t *testing.T) {
	quotaErr := fmt.Errorf("create pod for default/web: %w", apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "web-x7k2p",
		errors.New("exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2")))
	earlier := metav1.NewTime(t0.Add(-time.Hour))
	failing := []appsv1.ReplicaSetCondition{{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue,
		LastTransitionTime: earlier, Reason: "FailedCreate", Message: "the first failure"}}
	tests := []struct {
		name  string
		conds []appsv1.ReplicaSetCondition
		err   error
		diff  int
		want  []appsv1.ReplicaSetCondition
	}{
		{"a failed creation adds ReplicaFailure with the API server's message", nil, quotaErr, -1,
			[]appsv1.ReplicaSetCondition{{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0),
				Reason: "FailedCreate", Message: `pods "web-x7k2p" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2`}}},
		{"a failed deletion says FailedDelete", nil, errors.New("boom"), 2,
			[]appsv1.ReplicaSetCondition{{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0),
				Reason: "FailedDelete", Message: "boom"}}},
		{"another failure keeps the first one's condition", failing, quotaErr, -1, failing},
		{"a sync without error removes it", failing, nil, 0, []appsv1.ReplicaSetCondition{}},
		{"nothing to remove leaves the conditions alone", nil, nil, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := failureConditions(tt.conds, tt.err, tt.diff, t0)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestAReplicationControllersConditionsSurviveTheReplicaSetView(t *testing.T) {
	rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Status: corev1.ReplicationControllerStatus{Conditions: []corev1.ReplicationControllerCondition{{Type: corev1.ReplicationControllerReplicaFailure,
			Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: "exceeded quota"}}}}
	rs := replicationControllers.asReplicaSet(rc)
	if len(rs.Status.Conditions) != 1 || rs.Status.Conditions[0].Type != appsv1.ReplicaSetReplicaFailure {
		t.Fatalf("viewed as a ReplicaSet: %+v", rs.Status.Conditions)
	}
	back := replicationControllers.withStatus(rs, rs.Status).(*corev1.ReplicationController)
	if fmt.Sprint(back.Status.Conditions) != fmt.Sprint(rc.Status.Conditions) {
		t.Errorf("written back: %+v, want %+v", back.Status.Conditions, rc.Status.Conditions)
	}
}
