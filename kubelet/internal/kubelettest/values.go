package kubelettest

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ResourceList is the resources named in kv, name then quantity:
// ResourceList("cpu", "500m", "memory", "1Gi").
func ResourceList(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// EnvLines prints variables as `env` does.
func EnvLines(env []corev1.EnvVar) string {
	lines := make([]string, len(env))
	for i, e := range env {
		lines[i] = e.Name + "=" + e.Value
	}
	return strings.Join(lines, "\n")
}
