package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateSubPaths(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mount corev1.VolumeMount
		want  string // the errors, as the API server words them
	}{
		{"a subPathExpr of the pod's name is fine",
			corev1.VolumeMount{Name: "logs", MountPath: "/logs", SubPathExpr: "$(POD_NAME)"}, "[]"},
		{"subPath and subPathExpr together are refused",
			corev1.VolumeMount{Name: "logs", MountPath: "/logs", SubPath: "a", SubPathExpr: "$(POD_NAME)"},
			`[spec.containers[0].volumeMounts[0].subPathExpr: Invalid value: "$(POD_NAME)": subPathExpr and subPath are mutually exclusive]`},
		{"an absolute subPathExpr is refused, named by the list as Kubernetes does",
			corev1.VolumeMount{Name: "logs", MountPath: "/logs", SubPathExpr: "/$(POD_NAME)"},
			`[spec.containers[0].volumeMounts.subPathExpr: Invalid value: "/$(POD_NAME)": must be a relative path]`},
		{"a subPathExpr that climbs out of the volume is refused once",
			corev1.VolumeMount{Name: "logs", MountPath: "/logs", SubPathExpr: "../../$(POD_NAME)"},
			`[spec.containers[0].volumeMounts.subPathExpr: Invalid value: "../../$(POD_NAME)": must not contain '..']`},
		{"a subPath with .. is refused too",
			corev1.VolumeMount{Name: "logs", MountPath: "/logs", SubPath: "a/../b"},
			`[spec.containers[0].volumeMounts.subPath: Invalid value: "a/../b": must not contain '..']`},
		{"dots inside a name are no climbing",
			corev1.VolumeMount{Name: "logs", MountPath: "/logs", SubPath: "a..b/.x"}, "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := field.NewPath("spec", "containers").Index(0).Child("volumeMounts")
			if got := fmtErrs(validateSubPaths([]corev1.VolumeMount{tc.mount}, path)); got != tc.want {
				t.Errorf("got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func fmtErrs(errs field.ErrorList) string {
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}
