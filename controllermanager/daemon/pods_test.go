package daemon

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNewPodIsTheTemplatePinnedToItsNodeByAffinity(t *testing.T) {
	ds := testDS()
	ds.Annotations = map[string]string{"deprecated.daemonset.template.generation": "3"}
	// A required affinity of the template is replaced: placement already checked it.
	ds.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpExists}}}}}}}
	pod := newPod(ds, podTemplate(ds, "h1"), "node02")

	if pod.GenerateName != "agent-" || pod.Spec.NodeName != "" {
		t.Errorf("generateName %q, nodeName %q: want agent- and no node (the scheduler binds)", pod.GenerateName, pod.Spec.NodeName)
	}
	if ref := metav1.GetControllerOf(pod); ref == nil || ref.Kind != "DaemonSet" || ref.UID != "ds-uid" {
		t.Errorf("controller %+v, want the DaemonSet", ref)
	}
	if pod.Labels["app"] != "agent" || pod.Labels[hashLabel] != "h1" || pod.Labels[generationLabel] != "3" {
		t.Errorf("labels %v: want the template's, controller-revision-hash=h1, pod-template-generation=3", pod.Labels)
	}
	terms := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || len(terms[0].MatchExpressions) != 0 || len(terms[0].MatchFields) != 1 ||
		terms[0].MatchFields[0].Key != "metadata.name" || terms[0].MatchFields[0].Values[0] != "node02" {
		t.Errorf("required terms %+v, want matchFields metadata.name In [node02] only", terms)
	}
	if len(pod.Spec.Tolerations) != len(defaultTolerations) {
		t.Errorf("tolerations %+v, want the defaults", pod.Spec.Tolerations)
	}
	if ds.Spec.Template.Labels[hashLabel] != "" || len(ds.Spec.Template.Spec.Tolerations) != 0 ||
		len(ds.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions) != 1 {
		t.Error("making the pod changed the DaemonSet's template")
	}
	if got, err := targetNode(pod); got != "node02" || err != nil {
		t.Errorf("targetNode of an unbound pod = %q, %v; want node02 from its affinity", got, err)
	}
}

func TestTargetNode(t *testing.T) {
	withFields := func(values ...string) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: values}}}}}}}}}
	}
	bound := withFields("n1")
	bound.Spec.NodeName = "n2"
	tests := []struct {
		name    string
		pod     *corev1.Pod
		want    string
		wantErr bool
	}{
		{"a bound pod is for its node", bound, "n2", false},
		{"an unbound one for its affinity's node", withFields("n1"), "n1", false},
		{"an affinity naming two nodes names none", withFields("n1", "n2"), "", true},
		{"a pod without either is for no node", &corev1.Pod{}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := targetNode(tc.pod)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("targetNode = %q, %v; want %q, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
