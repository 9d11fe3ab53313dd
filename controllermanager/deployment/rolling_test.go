package deployment

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestMaxSurgeAndMaxUnavailable(t *testing.T) {
	pct := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	num := func(n int) *intstr.IntOrString { v := intstr.FromInt32(int32(n)); return &v }
	rolling := func(surge, unavailable *intstr.IntOrString) appsv1.DeploymentStrategy {
		return appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: surge, MaxUnavailable: unavailable}}
	}
	for _, tc := range []struct {
		name                       string
		replicas                   int32
		strategy                   appsv1.DeploymentStrategy
		wantSurge, wantUnavailable int32
	}{
		{name: "25% of 10 replicas is a surge of 3 (2.5 rounded up) and 2 unavailable (2.5 rounded down)",
			replicas: 10, strategy: rolling(pct("25%"), pct("25%")), wantSurge: 3, wantUnavailable: 2},
		{name: "25% of 2 replicas is a surge of 1 and none unavailable",
			replicas: 2, strategy: rolling(pct("25%"), pct("25%")), wantSurge: 1, wantUnavailable: 0},
		{name: "25% of 1 replica still allows one extra pod",
			replicas: 1, strategy: rolling(pct("25%"), pct("25%")), wantSurge: 1, wantUnavailable: 0},
		{name: "integers are taken as they are, whatever the replica count",
			replicas: 10, strategy: rolling(num(2), num(1)), wantSurge: 2, wantUnavailable: 1},
		{name: "100% of 4 replicas is 4 both ways",
			replicas: 4, strategy: rolling(pct("100%"), pct("100%")), wantSurge: 4, wantUnavailable: 4},
		{name: "a surge of 0 with 25% of 3 unavailable (0.75 rounded down) would never move, so one pod may be unavailable",
			replicas: 3, strategy: rolling(num(0), pct("25%")), wantSurge: 0, wantUnavailable: 1},
		{name: "maxUnavailable above spec.replicas is capped at spec.replicas",
			replicas: 2, strategy: rolling(num(1), num(5)), wantSurge: 1, wantUnavailable: 2},
		{name: "a Deployment scaled to 0 may have no pod unavailable",
			replicas: 0, strategy: rolling(pct("25%"), pct("25%")), wantSurge: 0, wantUnavailable: 0},
		{name: "a Recreate strategy has neither surge nor unavailability",
			replicas: 10, strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}},
		{name: "a Recreate strategy that still carries a rollingUpdate ignores it",
			replicas: 10, strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: num(3), MaxUnavailable: num(3)}}},
		{name: "a rollingUpdate without values is a surge of 0, so one pod may be unavailable (the API server defaults both to 25% before this runs)",
			replicas: 10, strategy: rolling(nil, nil), wantSurge: 0, wantUnavailable: 1},
		{name: "a percentage that does not parse makes both 0",
			replicas: 10, strategy: rolling(pct("a lot"), pct("25")), wantSurge: 0, wantUnavailable: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: &tc.replicas, Strategy: tc.strategy}}
			if got := maxSurge(d); got != tc.wantSurge {
				t.Errorf("maxSurge = %d, want %d", got, tc.wantSurge)
			}
			if got := maxUnavailable(d); got != tc.wantUnavailable {
				t.Errorf("maxUnavailable = %d, want %d", got, tc.wantUnavailable)
			}
		})
	}
}

// t0 is when the test ReplicaSets are created; testRS(age) adds seconds.
var t0 = time.Date(2025, 1, 1, 10, 0, 0, 0, time.UTC)

// testRS is a ReplicaSet called name, created age seconds after t0, asking
// for spec pods of which available are available.
func testRS(name string, age int, spec, available int32) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(age) * time.Second))},
		Spec:       appsv1.ReplicaSetSpec{Replicas: &spec},
		Status:     appsv1.ReplicaSetStatus{Replicas: max(spec, available), AvailableReplicas: available},
	}
}

// rollingDeployment is a RollingUpdate Deployment; surge and unavailable
// are "25%"-style percentages or integers.
func rollingDeployment(replicas int32, surge, unavailable string) *appsv1.Deployment {
	s, u := intstr.Parse(surge), intstr.Parse(unavailable)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Strategy: appsv1.DeploymentStrategy{
			Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &s, MaxUnavailable: &u}}},
	}
}

// describe writes a plan as "name→size" entries.
func describe(plan []scaling) []string {
	var out []string
	for _, s := range plan {
		out = append(out, fmt.Sprintf("%s→%d", s.rs.Name, s.to))
	}
	return out
}

func TestPlanRolling(t *testing.T) {
	for _, tc := range []struct {
		name  string
		d     *appsv1.Deployment
		newRS *appsv1.ReplicaSet
		old   []*appsv1.ReplicaSet
		want  []string
	}{
		{name: "with 4 replicas, maxSurge 1 and maxUnavailable 0, a new ReplicaSet next to an old one of 4 grows by the one pod maxSurge allows",
			d: rollingDeployment(4, "1", "0"), newRS: testRS("new", 10, 0, 0), old: []*appsv1.ReplicaSet{testRS("old", 0, 4, 4)},
			want: []string{"new→1"}},
		{name: "with the surge used up and the new pod not available yet, nothing may move",
			d: rollingDeployment(4, "1", "0"), newRS: testRS("new", 10, 1, 0), old: []*appsv1.ReplicaSet{testRS("old", 0, 4, 4)}},
		{name: "once the new pod is available, the old ReplicaSet gives up one pod, keeping 4 available",
			d: rollingDeployment(4, "1", "0"), newRS: testRS("new", 10, 1, 1), old: []*appsv1.ReplicaSet{testRS("old", 0, 4, 4)},
			want: []string{"old→3"}},
		{name: "with maxSurge 0 and maxUnavailable 1 there is no room for a new pod, so an old one goes first",
			d: rollingDeployment(4, "0", "1"), newRS: testRS("new", 10, 0, 0), old: []*appsv1.ReplicaSet{testRS("old", 0, 4, 4)},
			want: []string{"old→3"}},
		{name: "with the 25% defaults on 4 replicas, one old pod may go although the surge pod is not available yet, since one may be unavailable",
			d: rollingDeployment(4, "25%", "25%"), newRS: testRS("new", 10, 1, 0), old: []*appsv1.ReplicaSet{testRS("old", 0, 4, 4)},
			want: []string{"old→3"}},
		{name: "with the 25% defaults on 10 replicas, the new ReplicaSet grows by the 3 pods of the surge at once",
			d: rollingDeployment(10, "25%", "25%"), newRS: testRS("new", 10, 0, 0), old: []*appsv1.ReplicaSet{testRS("old", 0, 10, 10)},
			want: []string{"new→3"}},
		{name: "with the 25% defaults on 10 replicas and none of the 3 new pods available, 2 old pods may go, the 2 that may be unavailable",
			d: rollingDeployment(10, "25%", "25%"), newRS: testRS("new", 10, 3, 0), old: []*appsv1.ReplicaSet{testRS("old", 0, 10, 10)},
			want: []string{"old→8"}},
		{name: "new pods not available yet count as unavailable, so they hold old pods back even when the total has room to shrink",
			d: rollingDeployment(4, "2", "0"), newRS: testRS("new", 10, 2, 0), old: []*appsv1.ReplicaSet{testRS("old", 0, 4, 4)}},
		{name: "while the new pods stay unavailable (a crashlooping version), an old pod that fails is not cleaned up: the good version must not shrink in favour of the bad one",
			d: rollingDeployment(10, "3", "2"), newRS: testRS("new", 10, 5, 0), old: []*appsv1.ReplicaSet{testRS("old", 0, 8, 7)}},
		{name: "an old ReplicaSet's unavailable pods go even while availability is below the minimum, since they serve nothing",
			d: rollingDeployment(4, "1", "0"), newRS: testRS("new", 10, 1, 1), old: []*appsv1.ReplicaSet{testRS("old", 0, 4, 2)},
			want: []string{"old→3"}},
		{name: "unavailable old pods go first, then available ones down to the minimum, in two scalings of the same ReplicaSet",
			d: rollingDeployment(4, "1", "1"), newRS: testRS("new", 10, 2, 2), old: []*appsv1.ReplicaSet{testRS("old", 0, 3, 2)},
			want: []string{"old→2", "old→1"}},
		{name: "of two old ReplicaSets the oldest gives up its pods first",
			d: rollingDeployment(4, "0", "1"), newRS: testRS("new", 20, 2, 2), old: []*appsv1.ReplicaSet{testRS("b", 10, 1, 1), testRS("a", 0, 1, 1)},
			want: []string{"a→0"}},
		{name: "two old ReplicaSets created in the same second are taken in name order",
			d: rollingDeployment(4, "0", "2"), newRS: testRS("new", 20, 2, 2), old: []*appsv1.ReplicaSet{testRS("y", 0, 1, 1), testRS("x", 0, 1, 1)},
			want: []string{"x→0", "y→0"}},
		{name: "an old ReplicaSet whose status still counts pods above its spec (a scale-down under way) counts only its spec as available",
			d: rollingDeployment(4, "1", "0"), newRS: testRS("new", 10, 2, 2), old: []*appsv1.ReplicaSet{testRS("old", 0, 3, 4)},
			want: []string{"old→2"}},
		{name: "a new ReplicaSet above spec.replicas is scaled down to it",
			d: rollingDeployment(3, "1", "0"), newRS: testRS("new", 10, 4, 4), old: []*appsv1.ReplicaSet{testRS("old", 0, 0, 0)},
			want: []string{"new→3"}},
		{name: "the new ReplicaSet never grows beyond spec.replicas, even with surge left over",
			d: rollingDeployment(4, "100%", "0"), newRS: testRS("new", 10, 3, 3), old: []*appsv1.ReplicaSet{testRS("old", 0, 0, 0)},
			want: []string{"new→4"}},
		{name: "a finished rollout has nothing to do",
			d: rollingDeployment(4, "1", "0"), newRS: testRS("new", 10, 4, 4), old: []*appsv1.ReplicaSet{testRS("old", 0, 0, 0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := describe(planRolling(tc.d, tc.newRS, tc.old))
			if !slices.Equal(got, tc.want) {
				t.Errorf("plan %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRollingUpdateStepByStep plays whole rollouts against a small model
// of the ReplicaSet controller and the kubelets: after each planned step
// the controller plans again at once, with ReplicaSet statuses as they
// were (a ReplicaSet just scaled down still counts its doomed pods); when
// it has nothing to do, the world moves: deleted pods vanish and one more
// pod of a growing ReplicaSet becomes available. After every single
// scaling, at most spec.replicas + maxSurge pods are asked for and at least
// spec.replicas - maxUnavailable stay available.
func TestRollingUpdateStepByStep(t *testing.T) {
	for _, tc := range []struct {
		name      string
		d         *appsv1.Deployment
		old       []*appsv1.ReplicaSet // fully available at the start
		wantSteps []string             // nil: not checked
	}{
		{name: "4 replicas with maxSurge 1 and maxUnavailable 0 alternate one new pod up, one old pod down",
			d: rollingDeployment(4, "1", "0"), old: []*appsv1.ReplicaSet{testRS("old", 0, 4, 4)},
			wantSteps: []string{"new 0→1", "old 4→3", "new 1→2", "old 3→2", "new 2→3", "old 2→1", "new 3→4", "old 1→0"}},
		{name: "4 replicas with maxSurge 0 and maxUnavailable 1 take an old pod down before each new one",
			d: rollingDeployment(4, "0", "1"), old: []*appsv1.ReplicaSet{testRS("old", 0, 4, 4)},
			wantSteps: []string{"old 4→3", "new 0→1", "old 3→2", "new 1→2", "old 2→1", "new 2→3", "old 1→0", "new 3→4"}},
		{name: "4 replicas with the 25% defaults (1 surge, 1 unavailable) go two pods at a time",
			d: rollingDeployment(4, "25%", "25%"), old: []*appsv1.ReplicaSet{testRS("old", 0, 4, 4)},
			wantSteps: []string{"new 0→1", "old 4→3", "new 1→2", "old 3→2", "new 2→3", "old 2→1", "new 3→4", "old 1→0"}},
		{name: "4 replicas with maxSurge 100% start all new pods at once and retire old ones as new ones become available",
			d: rollingDeployment(4, "100%", "0"), old: []*appsv1.ReplicaSet{testRS("old", 0, 4, 4)},
			wantSteps: []string{"new 0→4", "old 4→3", "old 3→2", "old 2→1", "old 1→0"}},
		{name: "a rollout begun in the middle of another retires the oldest ReplicaSet first",
			d: rollingDeployment(4, "1", "0"), old: []*appsv1.ReplicaSet{testRS("older", 0, 2, 2), testRS("old", 10, 2, 2)},
			wantSteps: []string{"new 0→1", "older 2→1", "new 1→2", "older 1→0", "new 2→3", "old 2→1", "new 3→4", "old 1→0"}},
		{name: "10 replicas with the 25% defaults stay within 13 pods and 8 available",
			d: rollingDeployment(10, "25%", "25%"), old: []*appsv1.ReplicaSet{testRS("old", 0, 10, 10)}},
		{name: "7 replicas with maxSurge 2 and maxUnavailable 3 stay within 9 pods and 4 available",
			d: rollingDeployment(7, "2", "3"), old: []*appsv1.ReplicaSet{testRS("old", 0, 7, 7)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.d
			newRS := testRS("new", 100, 0, 0)
			all := append(slices.Clone(tc.old), newRS)
			maxTotal, minAvailable := *d.Spec.Replicas+maxSurge(d), *d.Spec.Replicas-maxUnavailable(d)
			state := func() string {
				var b strings.Builder
				for _, rs := range all {
					fmt.Fprintf(&b, " %s=%d(%d available)", rs.Name, *rs.Spec.Replicas, rs.Status.AvailableReplicas)
				}
				return b.String()
			}
			var steps []string
			for round := 0; ; round++ {
				if round > 100 {
					t.Fatalf("no end after 100 rounds; steps %v; state%s", steps, state())
				}
				plan := planRolling(d, newRS, tc.old)
				if len(plan) == 0 {
					if !worldMoves(all) {
						break
					}
					continue
				}
				for _, s := range plan {
					steps = append(steps, fmt.Sprintf("%s %d→%d", s.rs.Name, *s.rs.Spec.Replicas, s.to))
					*s.rs.Spec.Replicas = s.to
					var total, available int32
					for _, rs := range all {
						total += *rs.Spec.Replicas
						available += availableOf(rs, *rs.Spec.Replicas)
					}
					if total > maxTotal {
						t.Errorf("after %s: %d pods asked for, more than spec.replicas + maxSurge = %d;%s", steps[len(steps)-1], total, maxTotal, state())
					}
					if available < minAvailable {
						t.Errorf("after %s: %d pods available, fewer than spec.replicas - maxUnavailable = %d;%s", steps[len(steps)-1], available, minAvailable, state())
					}
				}
			}
			if *newRS.Spec.Replicas != *d.Spec.Replicas || newRS.Status.AvailableReplicas != *d.Spec.Replicas || specReplicas(tc.old) != 0 {
				t.Errorf("the rollout stopped before its end:%s; steps %v", state(), steps)
			}
			if tc.wantSteps != nil && !slices.Equal(steps, tc.wantSteps) {
				t.Errorf("steps\n %v\nwant\n %v", steps, tc.wantSteps)
			}
		})
	}
}

// worldMoves is what happens between two syncs of the model: the pods of
// a scale-down are deleted, and one pod of a ReplicaSet that wants more
// becomes available. It reports whether anything changed.
func worldMoves(all []*appsv1.ReplicaSet) bool {
	moved := false
	for _, rs := range all {
		if rs.Status.AvailableReplicas > *rs.Spec.Replicas {
			rs.Status.AvailableReplicas = *rs.Spec.Replicas
			moved = true
		}
	}
	for _, rs := range all {
		if rs.Status.AvailableReplicas < *rs.Spec.Replicas {
			rs.Status.AvailableReplicas++
			return true
		}
	}
	return moved
}
