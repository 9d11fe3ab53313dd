package protection

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAClaimIsInUseWhileAPodOnANodeNamesIt(t *testing.T) {
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"}}
	pod := func(ns, node, claim string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: corev1.PodSpec{NodeName: node,
			Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}},
			Status: corev1.PodStatus{Phase: phase}}
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"a running pod on a node that names the claim uses it", pod("default", "node01", "data", corev1.PodRunning), true},
		{"so does a finished one, which may be started again", pod("default", "node01", "data", corev1.PodSucceeded), true},
		{"a pod on no node yet does not: the kubelet will not start it with a claim being deleted", pod("default", "", "data", corev1.PodPending), false},
		{"a pod naming another claim does not", pod("default", "node01", "logs", corev1.PodRunning), false},
		{"a pod of another namespace does not", pod("other", "node01", "data", corev1.PodRunning), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := podUses(tc.pod, pvc); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTheFinalizerIsAddedOnceAndRemovedAlone(t *testing.T) {
	f := "kubernetes.io/pvc-protection"
	if got := withFinalizer([]string{"a", f}, f, true); len(got) != 2 || got[1] != f {
		t.Fatalf("adding again: %v", got)
	}
	if got := withFinalizer([]string{"a", f, "b"}, f, false); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("removing: %v", got)
	}
}
