package replicaset

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestAvailableIn(t *testing.T) {
	now := t0.Add(time.Minute)
	tests := []struct {
		name     string
		pod      *corev1.Pod
		minReady int32
		want     time.Duration
	}{
		{"with no minReadySeconds a ready pod is available at once", newTestPod("p", ready(50*time.Second)), 0, 0},
		{"a pod ready for 10s with minReadySeconds 30 is available in 20s", newTestPod("p", ready(50*time.Second)), 30, 20 * time.Second},
		{"a pod ready for exactly minReadySeconds is available now", newTestPod("p", ready(30*time.Second)), 30, 0},
		{"a pod ready for longer than minReadySeconds has been available for a while", newTestPod("p", ready(0)), 30, -30 * time.Second},
		{"a pod with no Ready transition time counts as available", newTestPod("p", phase(corev1.PodRunning)), 30, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := availableIn(tt.pod, tt.minReady, now); got != tt.want {
				t.Errorf("availableIn = %v, want %v", got, tt.want)
			}
		})
	}
}
