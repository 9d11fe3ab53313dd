package preemption

import (
	"slices"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

func TestFilterPodsWithPDBViolation(t *testing.T) {
	pods := []*framework.PodInfo{
		framework.NewPodInfo(st.MakePod("web-1").Label("app", "web").Obj()),
		framework.NewPodInfo(st.MakePod("web-2").Label("app", "web").Obj()),
		framework.NewPodInfo(st.MakePod("db-1").Label("app", "db").Obj()),
		framework.NewPodInfo(st.MakePod("web-3").Label("app", "web").Namespace("other").Obj()),
		framework.NewPodInfo(st.MakePod("bare").Obj()),
	}
	disrupted := pdb("web", 0)
	disrupted.Status.DisruptedPods = map[string]metav1.Time{"web-1": {}}
	emptySelector := pdb("web", 0)
	emptySelector.Spec.Selector = &metav1.LabelSelector{}
	tests := []struct {
		name          string
		pdbs          []*policyv1.PodDisruptionBudget
		wantViolating []string
	}{
		{"a budget allowing one disruption lets the first pod go and protects the second", []*policyv1.PodDisruptionBudget{pdb("web", 1)}, []string{"web-2"}},
		{"a budget allowing none protects every pod it selects in its namespace", []*policyv1.PodDisruptionBudget{pdb("web", 0)}, []string{"web-1", "web-2"}},
		{"a pod the budget already counts as disrupted uses up nothing", []*policyv1.PodDisruptionBudget{disrupted}, []string{"web-2"}},
		{"a budget with an empty selector selects nothing", []*policyv1.PodDisruptionBudget{emptySelector}, nil},
		{"no budgets, no violations", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			violating, nonViolating := filterPodsWithPDBViolation(pods, tt.pdbs)
			var got []string
			for _, p := range violating {
				got = append(got, p.Pod.Name)
			}
			if !slices.Equal(got, tt.wantViolating) || len(violating)+len(nonViolating) != len(pods) {
				t.Errorf("violating %v (of %d), want %v", got, len(violating)+len(nonViolating), tt.wantViolating)
			}
		})
	}
}
