package admission

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func TestServiceAccountMountsTheTokenVolume(t *testing.T) {
	noAutomount := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "quiet", Namespace: "default"}, AutomountServiceAccountToken: ptr.To(false)}
	objs := fakeObjects{serviceAccounts: []runtime.Object{noAutomount}}
	for _, tc := range []struct {
		name  string
		pod   corev1.Pod
		op    Operation
		mount bool
	}{
		{name: "a new pod gets it in every container", pod: corev1.Pod{Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init"}}, Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}}}, op: Create, mount: true},
		{name: "not when the pod says no", pod: corev1.Pod{Spec: corev1.PodSpec{AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{Name: "a"}}}}, op: Create},
		{name: "not when its service account says no", pod: corev1.Pod{Spec: corev1.PodSpec{ServiceAccountName: "quiet",
			Containers: []corev1.Container{{Name: "a"}}}}, op: Create},
		{name: "the pod's word wins over its service account's", pod: corev1.Pod{Spec: corev1.PodSpec{ServiceAccountName: "quiet",
			AutomountServiceAccountToken: ptr.To(true), Containers: []corev1.Container{{Name: "a"}}}}, op: Create, mount: true},
		{name: "not on update", pod: corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}}, op: Update},
		{name: "not for a mirror pod", pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "h"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}}, op: Create},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := tc.pod.DeepCopy()
			pod.Namespace = "default"
			if err := admitServiceAccount(context.Background(), &Attributes{Operation: tc.op, Resource: pods, Object: pod}, objs); err != nil {
				t.Fatal(err)
			}
			if !tc.mount {
				if len(pod.Spec.Volumes) != 0 {
					t.Fatalf("volumes %v, want none", pod.Spec.Volumes)
				}
				return
			}
			if len(pod.Spec.Volumes) != 1 || !strings.HasPrefix(pod.Spec.Volumes[0].Name, "kube-api-access-") || len(pod.Spec.Volumes[0].Name) != len("kube-api-access-")+5 {
				t.Fatalf("volumes %v, want one kube-api-access-xxxxx", pod.Spec.Volumes)
			}
			p := pod.Spec.Volumes[0].Projected
			if len(p.Sources) != 3 || p.Sources[0].ServiceAccountToken.Path != "token" || p.Sources[1].ConfigMap.Name != "kube-root-ca.crt" ||
				p.Sources[2].DownwardAPI.Items[0].FieldRef.FieldPath != "metadata.namespace" {
				t.Errorf("projected sources: %+v", p.Sources)
			}
			for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
				for _, c := range cs {
					if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != ServiceAccountMountPath || !c.VolumeMounts[0].ReadOnly {
						t.Errorf("container %s mounts %v", c.Name, c.VolumeMounts)
					}
				}
			}
		})
	}
}
