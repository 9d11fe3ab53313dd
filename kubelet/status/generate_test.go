package status

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func running() corev1.ContainerStatus {
	return corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
}

func exited(code int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}
}

func waiting() corev1.ContainerStatus {
	return corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: ReasonContainerCreating}}}
}

func restarting() corev1.ContainerStatus {
	cs := waiting()
	cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1}
	return cs
}

// TestPodPhase follows seed 003's table 5.3 and Kubernetes' getPhase.
func TestPodPhase(t *testing.T) {
	always, onFailure, never := corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever
	tests := []struct {
		name        string
		policy      corev1.RestartPolicy
		statuses    []corev1.ContainerStatus
		terminating bool
		want        corev1.PodPhase
	}{
		{"a pod whose container is being created is Pending", always, []corev1.ContainerStatus{waiting()}, false, corev1.PodPending},
		{"a pod with one running and one waiting container is Pending", always, []corev1.ContainerStatus{running(), waiting()}, false, corev1.PodPending},
		{"a pod whose containers run is Running", always, []corev1.ContainerStatus{running(), running()}, false, corev1.PodRunning},
		{"one container running and one failed is still Running", never, []corev1.ContainerStatus{running(), exited(1)}, false, corev1.PodRunning},
		{"a container that succeeded under Always will restart: Running", always, []corev1.ContainerStatus{exited(0)}, false, corev1.PodRunning},
		{"a container that succeeded under OnFailure: Succeeded", onFailure, []corev1.ContainerStatus{exited(0)}, false, corev1.PodSucceeded},
		{"a container that succeeded under Never: Succeeded", never, []corev1.ContainerStatus{exited(0)}, false, corev1.PodSucceeded},
		{"a container that failed under OnFailure will restart: Running", onFailure, []corev1.ContainerStatus{exited(1)}, false, corev1.PodRunning},
		{"a container that failed under Never: Failed", never, []corev1.ContainerStatus{exited(1)}, false, corev1.PodFailed},
		{"a container waiting to restart after a failure counts as stopped", always, []corev1.ContainerStatus{restarting()}, false, corev1.PodRunning},
		{"a deleted pod whose containers stopped cleanly is Succeeded, even under Always", always, []corev1.ContainerStatus{exited(0), exited(0)}, true, corev1.PodSucceeded},
		{"a deleted pod with a container that failed is Failed", always, []corev1.ContainerStatus{exited(0), exited(137)}, true, corev1.PodFailed},
		{"a deleted pod still stopping a container is Running", always, []corev1.ContainerStatus{exited(0), running()}, true, corev1.PodRunning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: tt.policy}}
			if tt.terminating {
				pod.DeletionTimestamp = &metav1.Time{}
			}
			if got := podPhase(pod, nil, tt.statuses); got != tt.want {
				t.Errorf("podPhase = %s, want %s", got, tt.want)
			}
		})
	}
}

// With init containers, getPhase also looks at them first.
func TestPodPhaseWithInitContainers(t *testing.T) {
	always, never := corev1.RestartPolicyAlways, corev1.RestartPolicyNever
	sidecar := corev1.Container{Name: "sidecar", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}
	tests := []struct {
		name     string
		policy   corev1.RestartPolicy
		inits    []corev1.Container
		init     []corev1.ContainerStatus
		statuses []corev1.ContainerStatus
		want     corev1.PodPhase
	}{
		{"an init container running: Pending", always, []corev1.Container{{}}, []corev1.ContainerStatus{running()}, []corev1.ContainerStatus{waiting()}, corev1.PodPending},
		{"an init container that failed under Never: Failed", never, []corev1.Container{{}}, []corev1.ContainerStatus{exited(1)}, []corev1.ContainerStatus{waiting()}, corev1.PodFailed},
		{"an init container crash-looping under Always: Pending", always, []corev1.Container{{}}, []corev1.ContainerStatus{restarting()}, []corev1.ContainerStatus{waiting()}, corev1.PodPending},
		{"init done, app running: Running", always, []corev1.Container{{}}, []corev1.ContainerStatus{exited(0)}, []corev1.ContainerStatus{running()}, corev1.PodRunning},
		{"a sidecar not started yet: Pending", always, []corev1.Container{sidecar}, []corev1.ContainerStatus{waiting()}, []corev1.ContainerStatus{waiting()}, corev1.PodPending},
		{"app done under Never, sidecar still running: Succeeded", never, []corev1.Container{sidecar}, []corev1.ContainerStatus{running()}, []corev1.ContainerStatus{exited(0)}, corev1.PodSucceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: tt.policy, InitContainers: tt.inits}}
			if got := podPhase(pod, tt.init, tt.statuses); got != tt.want {
				t.Errorf("podPhase = %s, want %s", got, tt.want)
			}
		})
	}
}
