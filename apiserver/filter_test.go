package apiserver

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestFilterMatchesSelectorsLikeKubernetes(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "prod", Labels: map[string]string{"app": "web", "tier": "front"}},
		Spec:       corev1.PodSpec{NodeName: "node01"},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	tests := []struct {
		name, namespace, labels, fields string
		want                            bool
	}{
		{"no selector matches everything", "", "", "", true},
		{"another namespace does not match", "dev", "", "", false},
		{"an equality label selector", "", "app=web", "", true},
		{"a set-based selector", "", "tier in (front,back),app!=db", "", true},
		{"a label that must not exist", "", "!tier", "", false},
		{"the pods of one node", "", "", "spec.nodeName=node01", true},
		{"unscheduled pods", "", "", "spec.nodeName=", false},
		{"a phase that is not Succeeded and not Failed", "", "", "status.phase!=Succeeded,status.phase!=Failed", true},
		{"a name and namespace", "", "", "metadata.name=web-1,metadata.namespace=prod", true},
	}
	pods := &Resource{GroupVersion: corev1.SchemeGroupVersion, Name: "pods", Kind: "Pod", Namespaced: true,
		New: func() runtime.Object { return &corev1.Pod{} },
		Fields: func(obj runtime.Object) fields.Set {
			pod := obj.(*corev1.Pod)
			return fields.Set{"spec.nodeName": pod.Spec.NodeName, "status.phase": string(pod.Status.Phase)}
		}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := newFilter(pods, tc.namespace, tc.labels, tc.fields)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.matches(pod); got != tc.want {
				t.Fatalf("got %v", got)
			}
		})
	}
}
