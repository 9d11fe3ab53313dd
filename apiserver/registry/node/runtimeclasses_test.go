package node

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func TestRuntimeClassesAreValidatedAsKubernetesDoes(t *testing.T) {
	valid := func() *nodev1.RuntimeClass {
		return &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "kata"}, Handler: "kata-qemu",
			Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"),
				corev1.ResourceMemory: resource.MustParse("120Mi")}},
			Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{"katacontainers.io/kata-runtime": "true"},
				Tolerations: []corev1.Toleration{{Key: "kata", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}}
	}
	tests := []struct {
		name   string
		change func(rc *nodev1.RuntimeClass)
		update bool // validate as an update of valid()
		field  string
		detail string
	}{
		{"a class with overhead and scheduling is valid", func(*nodev1.RuntimeClass) {}, false, "", ""},
		{"a handler is required", func(rc *nodev1.RuntimeClass) { rc.Handler = "" }, false, "handler", "Required value"},
		{"a handler is a DNS label", func(rc *nodev1.RuntimeClass) { rc.Handler = "Kata_QEMU" }, false,
			"handler", "a lowercase RFC 1123 label must consist of"},
		{"the handler is fixed once created", func(rc *nodev1.RuntimeClass) { rc.Handler = "runc" }, true, "handler", "field is immutable"},
		{"the overhead is never negative", func(rc *nodev1.RuntimeClass) {
			rc.Overhead.PodFixed[corev1.ResourceCPU] = resource.MustParse("-1")
		}, false, "overhead.limits[cpu]", "must be greater than or equal to 0"},
		{"the overhead names container resources", func(rc *nodev1.RuntimeClass) {
			rc.Overhead.PodFixed["pods"] = resource.MustParse("1")
		}, false, "overhead.limits[pods]", "must be a standard resource for containers"},
		{"a nodeSelector is a label map", func(rc *nodev1.RuntimeClass) { rc.Scheduling.NodeSelector["bad key!"] = "x" }, false,
			"scheduling.nodeSelector", "name part must consist of"},
		{"Exists takes no value", func(rc *nodev1.RuntimeClass) { rc.Scheduling.Tolerations[0].Value = "yes" }, false,
			"scheduling.tolerations[0].operator", "value must be empty when `operator` is 'Exists'"},
		{"tolerationSeconds only for NoExecute", func(rc *nodev1.RuntimeClass) {
			rc.Scheduling.Tolerations[0].TolerationSeconds = ptr.To[int64](60)
		}, false, "scheduling.tolerations[0].effect", "effect must be 'NoExecute' when `tolerationSeconds` is set"},
		{"an unknown effect", func(rc *nodev1.RuntimeClass) { rc.Scheduling.Tolerations[0].Effect = "NoRun" }, false,
			"scheduling.tolerations[0].effect", `Unsupported value: "NoRun"`},
		{"no toleration twice", func(rc *nodev1.RuntimeClass) {
			rc.Scheduling.Tolerations = append(rc.Scheduling.Tolerations, rc.Scheduling.Tolerations[0])
		}, false, "scheduling.tolerations[1]", "Duplicate value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc := valid()
			tc.change(rc)
			var old runtime.Object
			if tc.update {
				old = valid()
			}
			errs := validateRuntimeClass(rc, old)
			if tc.field == "" {
				if len(errs) > 0 {
					t.Fatalf("want valid, got %v", errs)
				}
				return
			}
			for _, e := range errs {
				if strings.HasPrefix(e.Field, tc.field) && strings.Contains(e.Error(), tc.detail) {
					return
				}
			}
			t.Fatalf("want an error on %s with %q, got %v", tc.field, tc.detail, errs)
		})
	}
}

func TestKubectlGetRuntimeClassShowsTheHandler(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "gvisor", CreationTimestamp: metav1.NewTime(now.Add(-2 * time.Hour))}, Handler: "runsc"}
	if got := RuntimeClasses.Row(rc, now); len(got) != 2 || got[0] != "runsc" || got[1] != "120m" {
		t.Fatalf("cells %v for columns %v", got, RuntimeClasses.Columns)
	}
}
