package podcondition

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func withReady(status corev1.ConditionStatus) *corev1.Pod {
	return &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: status},
	}}}
}

func TestIsReady(t *testing.T) {
	tests := []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"a pod whose Ready condition is True is ready", withReady(corev1.ConditionTrue), true},
		{"a pod whose Ready condition is False is not ready", withReady(corev1.ConditionFalse), false},
		{"a pod with Ready Unknown is not ready", withReady(corev1.ConditionUnknown), false},
		{"a pod with no Ready condition is not ready", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsReady(tt.pod); got != tt.want {
				t.Errorf("IsReady = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestGetPointsIntoThePodSoACopyCanBeSet(t *testing.T) {
	pod := withReady(corev1.ConditionTrue)
	Get(pod, corev1.PodReady).Status = corev1.ConditionFalse
	if IsReady(pod) {
		t.Error("setting the condition Get returned did not change the pod")
	}
	if Get(pod, corev1.ContainersReady) != nil {
		t.Error("Get found a condition the pod does not have")
	}
}
