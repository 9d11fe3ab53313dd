package cri

import "testing"

func TestNormalizeRef(t *testing.T) {
	tests := []struct {
		name, ref, want string
	}{
		{"a bare name is an official image on Docker Hub, tagged latest", "nginx", "docker.io/library/nginx:latest"},
		{"a tag is kept", "nginx:1.25", "docker.io/library/nginx:1.25"},
		{"a user's image on Docker Hub is not under library/", "bitnami/redis:7", "docker.io/bitnami/redis:7"},
		{"docker.io spelled out still gets library/", "docker.io/nginx", "docker.io/library/nginx:latest"},
		{"a first component with a dot is a registry", "registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10"},
		{"a registry with a port is a registry", "localhost:5000/app", "localhost:5000/app:latest"},
		{"localhost is a registry", "localhost/app:v1", "localhost/app:v1"},
		{"a digest takes the place of the tag", "nginx@sha256:0123", "docker.io/library/nginx@sha256:0123"},
		{"an upper-case name is refused", "Nginx", ""},
		{"an empty name is refused", "", ""},
		{"a name with a space is refused", "nginx 1.25", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := normalizeRef(tt.ref)
			if tt.want == "" {
				if err == nil {
					t.Errorf("normalizeRef(%q) = %q, want an error", tt.ref, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("normalizeRef(%q) = %q, %v; want %q", tt.ref, got, err, tt.want)
			}
		})
	}
}
