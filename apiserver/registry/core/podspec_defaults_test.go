package core

import "testing"

func TestPullPolicyDefaultsFromTheTag(t *testing.T) {
	tests := []struct{ image, want string }{
		{"nginx", "Always"},
		{"nginx:latest", "Always"},
		{"nginx:1.25", "IfNotPresent"},
		{"registry:5000/team/app", "Always"},
		{"registry:5000/team/app:v2", "IfNotPresent"},
		{"nginx@sha256:abcd", "IfNotPresent"},
	}
	for _, tc := range tests {
		if got := pullPolicyFor(tc.image); string(got) != tc.want {
			t.Errorf("%s: got %s, want %s", tc.image, got, tc.want)
		}
	}
}
