package kubelet

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAClaimMountIsReadOnlyIfItsSourceSaysSo(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u-p"}, Spec: corev1.PodSpec{
		Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data", ReadOnly: true}}}}}}
	c := corev1.Container{VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}
	mounts := volumeMounts(pod, c, nil)
	if len(mounts) != 1 || !mounts[0].Readonly || mounts[0].HostPath != "/var/lib/kubelet/pods/u-p/volumes/kubernetes.io~csi/data" {
		t.Errorf("mounts %v", mounts)
	}
}
