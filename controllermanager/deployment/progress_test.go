package deployment

import (
	"math"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestProgressConditions(t *testing.T) {
	// Fixed instants: the function compares and copies the times it gets.
	now := t0.Add(time.Hour)
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(d)) }
	cond := func(status corev1.ConditionStatus, reason, message string, updated, transitioned metav1.Time) appsv1.DeploymentCondition {
		return appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: status, Reason: reason, Message: message,
			LastUpdateTime: updated, LastTransitionTime: transitioned}
	}
	const yes, no, unknown = corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown
	// counts is a status: replicas, updatedReplicas, availableReplicas.
	counts := func(replicas, updated, available int32, conds ...appsv1.DeploymentCondition) appsv1.DeploymentStatus {
		return appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: replicas, UpdatedReplicas: updated,
			ReadyReplicas: available, AvailableReplicas: available, Conditions: conds}
	}
	updating := cond(yes, reasonRSUpdated, `ReplicaSet "web-2" is progressing.`, at(-time.Minute), at(-time.Hour))
	for _, tc := range []struct {
		name     string
		deadline *int32
		stored   appsv1.DeploymentStatus // what the Deployment's status said before this sync
		seen     appsv1.DeploymentStatus // what this sync counted
		created  bool
		want     *appsv1.DeploymentCondition // nil: no Progressing condition
	}{
		{name: "a rollout whose new ReplicaSet runs every replica, all available, has successfully progressed",
			stored: counts(5, 4, 4, updating), seen: counts(4, 4, 4),
			want: ptr(cond(yes, reasonNewRSAvailable, `ReplicaSet "web-2" has successfully progressed.`, at(0), at(-time.Hour)))},
		{name: "the sync that created the new ReplicaSet says so",
			stored: counts(4, 0, 4), seen: counts(4, 0, 4), created: true,
			want: ptr(cond(yes, reasonNewRSCreated, `Created new replica set "web-2"`, at(0), at(0)))},
		{name: "more up-to-date pods than before is progress: lastUpdateTime moves, lastTransitionTime stays",
			stored: counts(5, 1, 4, updating), seen: counts(5, 2, 4),
			want: ptr(cond(yes, reasonRSUpdated, `ReplicaSet "web-2" is progressing.`, at(0), at(-time.Hour)))},
		{name: "fewer old pods than before is progress",
			stored: counts(5, 2, 4, updating), seen: counts(4, 2, 4),
			want: ptr(cond(yes, reasonRSUpdated, `ReplicaSet "web-2" is progressing.`, at(0), at(-time.Hour)))},
		{name: "progress after a resume turns Unknown into True, so the transition time is now",
			stored: counts(5, 1, 4, cond(unknown, reasonResumed, "Deployment is resumed", at(-time.Minute), at(-time.Minute))),
			seen:   counts(5, 2, 4),
			want:   ptr(cond(yes, reasonRSUpdated, `ReplicaSet "web-2" is progressing.`, at(0), at(0)))},
		{name: "no progress leaves the condition as it was, times included",
			stored: counts(5, 1, 4, updating), seen: counts(5, 1, 4),
			want: &updating},
		{name: "no progress for longer than progressDeadlineSeconds exceeds the deadline",
			stored: counts(5, 1, 4, cond(yes, reasonRSUpdated, `ReplicaSet "web-2" is progressing.`, at(-11*time.Minute), at(-time.Hour))),
			seen:   counts(5, 1, 4),
			want:   ptr(cond(no, reasonTimedOut, `ReplicaSet "web-2" has timed out progressing.`, at(0), at(0)))},
		{name: "a deadline exceeded stays exceeded while nothing progresses",
			stored: counts(5, 1, 4, cond(no, reasonTimedOut, `ReplicaSet "web-2" has timed out progressing.`, at(-time.Minute), at(-time.Minute))),
			seen:   counts(5, 1, 4),
			want:   ptr(cond(no, reasonTimedOut, `ReplicaSet "web-2" has timed out progressing.`, at(-time.Minute), at(-time.Minute)))},
		{name: "a paused spell does not count against the deadline: the resume restarted it",
			stored: counts(5, 1, 4, cond(unknown, reasonResumed, "Deployment is resumed", at(-time.Minute), at(-time.Minute))),
			seen:   counts(5, 1, 4),
			want:   ptr(cond(unknown, reasonResumed, "Deployment is resumed", at(-time.Minute), at(-time.Minute)))},
		{name: "a complete rollout, resynced, keeps its condition untouched",
			stored: counts(4, 4, 4, cond(yes, reasonNewRSAvailable, `ReplicaSet "web-2" has successfully progressed.`, at(-time.Hour), at(-time.Hour))),
			seen:   counts(4, 4, 3),
			want:   ptr(cond(yes, reasonNewRSAvailable, `ReplicaSet "web-2" has successfully progressed.`, at(-time.Hour), at(-time.Hour)))},
		{name: "without a progress deadline there is no Progressing condition at all",
			deadline: ptr(int32(math.MaxInt32)), stored: counts(5, 1, 4, updating), seen: counts(5, 2, 4)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := rollingDeployment(4, "1", "0")
			d.Generation = 1
			d.Spec.ProgressDeadlineSeconds = ptr(int32(600))
			if tc.deadline != nil {
				d.Spec.ProgressDeadlineSeconds = tc.deadline
			}
			d.Status = tc.stored
			seen := tc.seen
			seen.Conditions = tc.stored.Conditions // calculateStatus carries them over
			got := getCondition(appsv1.DeploymentStatus{Conditions: progressConditions(d, testRS("web-2", 0, 4, 4), seen, tc.created, now)},
				appsv1.DeploymentProgressing)
			switch {
			case tc.want == nil && got != nil:
				t.Errorf("got %+v, want no Progressing condition", *got)
			case tc.want != nil && got == nil:
				t.Errorf("got no Progressing condition, want %+v", *tc.want)
			case tc.want != nil && (got.Status != tc.want.Status || got.Reason != tc.want.Reason || got.Message != tc.want.Message ||
				!got.LastUpdateTime.Equal(&tc.want.LastUpdateTime) || !got.LastTransitionTime.Equal(&tc.want.LastTransitionTime)):
				t.Errorf("\n got %+v\nwant %+v", *got, *tc.want)
			}
		})
	}
}
