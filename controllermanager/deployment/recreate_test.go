package deployment

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

func TestOldPodsRunning(t *testing.T) {
	// observed is an old ReplicaSet at generation 2 whose status
	// describes generation observedGeneration and counts pods.
	observed := func(pods int32, observedGeneration int64) *appsv1.ReplicaSet {
		rs := testRS("old", 0, 0, 0)
		rs.Generation, rs.Status.ObservedGeneration, rs.Status.Replicas = 2, observedGeneration, pods
		return rs
	}
	for _, tc := range []struct {
		name        string
		old         []*appsv1.ReplicaSet
		wantPods    int32
		wantSettled bool
	}{
		{name: "old ReplicaSets scaled to 0 with no pods left let the new one start",
			old: []*appsv1.ReplicaSet{observed(0, 2), observed(0, 2)}, wantSettled: true},
		{name: "an old ReplicaSet still counting pods holds the new one back",
			old: []*appsv1.ReplicaSet{observed(0, 2), observed(2, 2)}, wantPods: 2, wantSettled: true},
		{name: "an old ReplicaSet whose status predates its scale-down holds the new one back even at 0 pods, since it may be creating some",
			old: []*appsv1.ReplicaSet{observed(0, 1)}, wantPods: 0, wantSettled: false},
		{name: "no old ReplicaSet at all (the first rollout) lets the new one start",
			wantSettled: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pods, settled := oldPodsRunning(tc.old)
			if pods != tc.wantPods || settled != tc.wantSettled {
				t.Errorf("oldPodsRunning = %d pods, settled %v; want %d, %v", pods, settled, tc.wantPods, tc.wantSettled)
			}
		})
	}
}
