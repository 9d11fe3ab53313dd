package images

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestShouldPull(t *testing.T) {
	tests := []struct {
		name    string
		policy  corev1.PullPolicy
		present bool
		want    bool
	}{
		{"Always pulls even an image the node has", corev1.PullAlways, true, true},
		{"Always pulls a missing image", corev1.PullAlways, false, true},
		{"IfNotPresent uses the image the node has", corev1.PullIfNotPresent, true, false},
		{"IfNotPresent pulls a missing image", corev1.PullIfNotPresent, false, true},
		{"Never uses the image the node has", corev1.PullNever, true, false},
		{"Never does not pull a missing image", corev1.PullNever, false, false},
		{"no policy behaves as IfNotPresent", "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := shouldPull(tt.policy, tt.present); got != tt.want {
				t.Errorf("shouldPull(%q, present=%v) = %v, want %v", tt.policy, tt.present, got, tt.want)
			}
		})
	}
}
