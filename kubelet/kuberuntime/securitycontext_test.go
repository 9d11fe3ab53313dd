package kuberuntime

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

func TestContainerSecurityContext(t *testing.T) {
	tests := []struct {
		name                string
		pod                 *corev1.PodSecurityContext
		container           *corev1.SecurityContext
		wantUser, wantGroup *int64
		wantGroups          []int64
		check               func(*runtimeapi.LinuxContainerSecurityContext) bool
	}{
		{name: "nothing set runs as the image's user", pod: nil, container: nil},
		{name: "the pod's runAsUser and runAsGroup",
			pod:      &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1001), RunAsGroup: ptr.To[int64](2002)},
			wantUser: ptr.To[int64](1001), wantGroup: ptr.To[int64](2002)},
		{name: "the container's override the pod's",
			pod:       &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1001), RunAsGroup: ptr.To[int64](2001)},
			container: &corev1.SecurityContext{RunAsUser: ptr.To[int64](1002), RunAsGroup: ptr.To[int64](2002)},
			wantUser:  ptr.To[int64](1002), wantGroup: ptr.To[int64](2002)},
		{name: "fsGroup comes first among the supplemental groups",
			pod:        &corev1.PodSecurityContext{FSGroup: ptr.To[int64](2000), SupplementalGroups: []int64{1234, 5678}},
			wantGroups: []int64{2000, 1234, 5678}},
		{name: "readOnlyRootFilesystem, privileged and allowPrivilegeEscalation false",
			container: &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr.To(true), Privileged: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false)},
			check: func(sc *runtimeapi.LinuxContainerSecurityContext) bool {
				return sc.ReadonlyRootfs && sc.Privileged && sc.NoNewPrivs
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: tt.pod}}
			sc := containerSecurityContext(pod, corev1.Container{SecurityContext: tt.container})
			if (sc.RunAsUser == nil) != (tt.wantUser == nil) || (sc.RunAsUser != nil && sc.RunAsUser.Value != *tt.wantUser) {
				t.Errorf("run_as_user = %v, want %v", sc.RunAsUser, tt.wantUser)
			}
			if (sc.RunAsGroup == nil) != (tt.wantGroup == nil) || (sc.RunAsGroup != nil && sc.RunAsGroup.Value != *tt.wantGroup) {
				t.Errorf("run_as_group = %v, want %v", sc.RunAsGroup, tt.wantGroup)
			}
			if len(sc.SupplementalGroups) != len(tt.wantGroups) {
				t.Errorf("supplemental_groups = %v, want %v", sc.SupplementalGroups, tt.wantGroups)
			}
			for i := range tt.wantGroups {
				if i < len(sc.SupplementalGroups) && sc.SupplementalGroups[i] != tt.wantGroups[i] {
					t.Errorf("supplemental_groups = %v, want %v", sc.SupplementalGroups, tt.wantGroups)
				}
			}
			if tt.check != nil && !tt.check(sc) {
				t.Errorf("security context %v", sc)
			}
		})
	}
}
