package deployment

import (
	"slices"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

// sizedFor records on rs that it was last scaled for a Deployment of
// desired replicas and max = desired + maxSurge.
func sizedFor(rs *appsv1.ReplicaSet, desired, max int32) *appsv1.ReplicaSet {
	rs.Annotations = map[string]string{desiredReplicasAnnotation: strconv.Itoa(int(desired)), maxReplicasAnnotation: strconv.Itoa(int(max))}
	return rs
}

func TestPlanScale(t *testing.T) {
	recreate := func(replicas int32) *appsv1.Deployment {
		d := rollingDeployment(replicas, "0", "0")
		d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
		return d
	}
	for _, tc := range []struct {
		name  string
		d     *appsv1.Deployment
		newRS *appsv1.ReplicaSet
		old   []*appsv1.ReplicaSet
		want  []string
	}{
		{name: "the only ReplicaSet with pods takes all of a new spec.replicas",
			d: rollingDeployment(6, "25%", "25%"), newRS: sizedFor(testRS("new", 10, 4, 4), 4, 5), old: []*appsv1.ReplicaSet{testRS("old", 0, 0, 0)},
			want: []string{"new→6"}},
		{name: "with no ReplicaSet having pods, the new one gets spec.replicas",
			d: rollingDeployment(3, "25%", "25%"), newRS: testRS("new", 10, 0, 0), old: []*appsv1.ReplicaSet{testRS("old", 0, 0, 0)},
			want: []string{"new→3"}},
		{name: "a paused Deployment whose template changed has no new ReplicaSet, so the old one with pods takes spec.replicas",
			d: rollingDeployment(6, "25%", "25%"), old: []*appsv1.ReplicaSet{testRS("a", 0, 0, 0), sizedFor(testRS("b", 10, 4, 4), 4, 5)},
			want: []string{"b→6"}},
		{name: "with no new ReplicaSet and none having pods, the newest old one gets spec.replicas",
			d: rollingDeployment(2, "25%", "25%"), old: []*appsv1.ReplicaSet{testRS("b", 10, 0, 0), testRS("a", 0, 0, 0)},
			want: []string{"b→2"}},
		{name: "an unchanged size is not written again",
			d: rollingDeployment(4, "25%", "25%"), newRS: sizedFor(testRS("new", 10, 4, 4), 4, 5)},
		{name: "a new ReplicaSet that already runs spec.replicas available pods sends the old ones to 0",
			d: rollingDeployment(4, "25%", "25%"), newRS: sizedFor(testRS("new", 10, 4, 4), 4, 5), old: []*appsv1.ReplicaSet{sizedFor(testRS("old", 0, 1, 1), 4, 5)},
			want: []string{"old→0"}},
		{name: "scaling 10 to 20 mid-rollout (8 old + 5 new, sized for 13) shares the 12 new pods 7 and 5, keeping the 8:5 ratio",
			d:     rollingDeployment(20, "25%", "25%"),
			newRS: sizedFor(testRS("new", 10, 5, 0), 10, 13), old: []*appsv1.ReplicaSet{sizedFor(testRS("old", 0, 8, 8), 10, 13)},
			want: []string{"old→15", "new→10"}},
		{name: "scaling 10 to 5 mid-rollout (6 + 6 sized for 13, now 5 + 2 surge = 7) takes 3 from the older and the 2 left from the newer",
			d:     rollingDeployment(5, "25%", "25%"),
			newRS: sizedFor(testRS("new", 10, 6, 0), 10, 13), old: []*appsv1.ReplicaSet{sizedFor(testRS("old", 0, 6, 6), 10, 13)},
			want: []string{"old→3", "new→4"}},
		{name: "what rounding leaves over goes to the largest ReplicaSet, the newer among equals when growing",
			d:     rollingDeployment(5, "25%", "25%"),
			newRS: sizedFor(testRS("new", 10, 1, 0), 4, 5), old: []*appsv1.ReplicaSet{sizedFor(testRS("old", 0, 1, 1), 4, 5)},
			want: []string{"new→6", "old→1"}},
		{name: "a ReplicaSet without the max-replicas annotation is sized against the Deployment's current pod count",
			d: func() *appsv1.Deployment {
				d := rollingDeployment(8, "0", "25%") // allowed 8
				d.Status.Replicas = 4
				return d
			}(),
			newRS: testRS("new", 10, 2, 0), old: []*appsv1.ReplicaSet{testRS("old", 0, 2, 2)},
			want: []string{"new→4", "old→4"}},
		{name: "scaling to 0 takes every pod of every ReplicaSet",
			d:     rollingDeployment(0, "25%", "25%"),
			newRS: sizedFor(testRS("new", 10, 2, 0), 4, 5), old: []*appsv1.ReplicaSet{sizedFor(testRS("old", 0, 3, 3), 4, 5)},
			want: []string{"old→0", "new→0"}},
		{name: "a Recreate Deployment with two ReplicaSets having pods is not scaled in proportion: its rollout will settle it",
			d: recreate(6), newRS: sizedFor(testRS("new", 10, 2, 0), 4, 4), old: []*appsv1.ReplicaSet{sizedFor(testRS("old", 0, 2, 2), 4, 4)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := describe(planScale(tc.d, tc.newRS, tc.old))
			if !slices.Equal(got, tc.want) {
				t.Errorf("plan %v, want %v", got, tc.want)
			}
		})
	}
}

func TestIsScalingEvent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		owned []*appsv1.ReplicaSet
		want  bool
	}{
		{name: "a ReplicaSet with pods sized for another spec.replicas means spec.replicas changed",
			owned: []*appsv1.ReplicaSet{sizedFor(testRS("a", 0, 3, 3), 3, 4)}, want: true},
		{name: "ReplicaSets sized for the current spec.replicas mean it did not",
			owned: []*appsv1.ReplicaSet{sizedFor(testRS("a", 0, 3, 3), 4, 5), sizedFor(testRS("b", 0, 1, 1), 4, 5)}},
		{name: "a ReplicaSet scaled to 0 does not count, whatever it was sized for",
			owned: []*appsv1.ReplicaSet{sizedFor(testRS("a", 0, 0, 0), 3, 4)}},
		{name: "a ReplicaSet without the annotation does not count",
			owned: []*appsv1.ReplicaSet{testRS("a", 0, 3, 3)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := isScalingEvent(rollingDeployment(4, "25%", "25%"), tc.owned); got != tc.want {
				t.Errorf("isScalingEvent = %v, want %v", got, tc.want)
			}
		})
	}
}
