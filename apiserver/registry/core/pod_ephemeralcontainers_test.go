package core

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

func TestUpdateEphemeralContainers(t *testing.T) {
	debugger := func(mod ...func(*corev1.EphemeralContainer)) corev1.EphemeralContainer {
		ec := corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger", Image: "busybox:1.36"}}
		for _, m := range mod {
			m(&ec)
		}
		return ec
	}
	running := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}
	running.Generation = 1
	withDebugger, _ := updateEphemeralContainers(running, &corev1.Pod{Spec: corev1.PodSpec{EphemeralContainers: []corev1.EphemeralContainer{debugger()}}}, time.Time{})
	tests := []struct {
		name    string
		cur     *corev1.Pod
		ecs     []corev1.EphemeralContainer
		wantErr string // "" for valid
		wantGen int64
	}{
		{"one is added, defaulted, and the generation bumped", running, []corev1.EphemeralContainer{debugger(func(ec *corev1.EphemeralContainer) { ec.TargetContainerName = "web" })}, "", 2},
		{"its name is unique among all containers", running, []corev1.EphemeralContainer{debugger(func(ec *corev1.EphemeralContainer) { ec.Name = "web" })},
			`spec.ephemeralContainers[0].name: Duplicate value: "web"`, 0},
		{"it has no ports", running, []corev1.EphemeralContainer{debugger(func(ec *corev1.EphemeralContainer) { ec.Ports = []corev1.ContainerPort{{ContainerPort: 80}} })},
			"spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container", 0},
		{"nor probes", running, []corev1.EphemeralContainer{debugger(func(ec *corev1.EphemeralContainer) { ec.ReadinessProbe = &corev1.Probe{} })},
			"spec.ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an Ephemeral Container", 0},
		{"nor resources", running, []corev1.EphemeralContainer{debugger(func(ec *corev1.EphemeralContainer) {
			ec.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		})}, "spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container", 0},
		{"nor a restart policy", running, []corev1.EphemeralContainer{debugger(func(ec *corev1.EphemeralContainer) { ec.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways) })},
			"spec.ephemeralContainers[0].restartPolicy: Forbidden", 0},
		{"its target is one of the pod's containers", running, []corev1.EphemeralContainer{debugger(func(ec *corev1.EphemeralContainer) { ec.TargetContainerName = "db" })},
			`spec.ephemeralContainers[0].targetContainerName: Not found: "db"`, 0},
		{"an image is required", running, []corev1.EphemeralContainer{debugger(func(ec *corev1.EphemeralContainer) { ec.Image = "" })},
			"spec.ephemeralContainers[0].image: Required value", 0},
		{"the same list again changes nothing", withDebugger.(*corev1.Pod), withDebugger.(*corev1.Pod).Spec.EphemeralContainers, "", 2},
		{"one added is never removed", withDebugger.(*corev1.Pod), nil,
			`spec.ephemeralContainers: Forbidden: existing ephemeral containers "debugger" may not be removed`, 0},
		{"nor changed", withDebugger.(*corev1.Pod), []corev1.EphemeralContainer{debugger(func(ec *corev1.EphemeralContainer) { ec.Image = "busybox:1.37" })},
			`spec.ephemeralContainers[0]: Forbidden: existing ephemeral containers "debugger" may not be changed`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := tt.cur.DeepCopy()
			next.Spec.Containers = nil // only the ephemeral containers are the client's to write
			next.Spec.EphemeralContainers = tt.ecs
			out, errs := updateEphemeralContainers(tt.cur, next, time.Time{})
			if tt.wantErr != "" {
				if !strings.Contains(errs.ToAggregate().Error(), tt.wantErr) {
					t.Fatalf("errors %v, want %q", errs, tt.wantErr)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatalf("refused: %v", errs)
			}
			pod := out.(*corev1.Pod)
			if len(pod.Spec.Containers) != 1 {
				t.Errorf("containers %v: the subresource wrote more than the ephemeral containers", pod.Spec.Containers)
			}
			if ec := pod.Spec.EphemeralContainers[0]; ec.TerminationMessagePolicy != corev1.TerminationMessageReadFile || ec.ImagePullPolicy != corev1.PullIfNotPresent {
				t.Errorf("not defaulted: %+v", ec)
			}
			if pod.Generation != tt.wantGen {
				t.Errorf("generation %d, want %d", pod.Generation, tt.wantGen)
			}
		})
	}
}
