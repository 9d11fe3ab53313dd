package kubelettest

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// AdmissionPod is a pod for node01 with one container, shaped by opts.
func AdmissionPod(name string, opts ...func(*corev1.Pod)) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{NodeName: "node01", Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	for _, o := range opts {
		o(pod)
	}
	return pod
}

// HostPort gives an AdmissionPod's container the host port port.
func HostPort(port int32, proto corev1.Protocol) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, corev1.ContainerPort{ContainerPort: port, HostPort: port, Protocol: proto})
	}
}

// StoragePod is a pod with an emptyDir "cache" of sizeLimit, a configMap
// volume, and containers "app" and "side" with the ephemeral-storage
// limits given ("" for none).
func StoragePod(sizeLimit, appLimit, sideLimit string) *corev1.Pod {
	container := func(name, limit string) corev1.Container {
		c := corev1.Container{Name: name, Image: "busybox:1.36"}
		if limit != "" {
			c.Resources.Limits = corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse(limit)}
		}
		return c
	}
	cache := corev1.Volume{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	if sizeLimit != "" {
		cache.EmptyDir.SizeLimit = ptr.To(resource.MustParse(sizeLimit))
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
		Spec: corev1.PodSpec{NodeName: "node01", Containers: []corev1.Container{container("app", appLimit), container("side", sideLimit)},
			Volumes: []corev1.Volume{cache, {Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}}}},
	}
}
