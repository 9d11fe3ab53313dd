package storageformat_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/apiserver/storageformat"
)

// benchPod is a pod as the scheduler benchmarks store it once bound and
// running: requests, a node, conditions and a status.
func benchPod() *corev1.Pod {
	return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "web-7d4b9c-x2x9z", Namespace: "default", UID: "0b9e7f4e-2f1a-4c3b-9d8e-7a6b5c4d3e2f",
			Labels:          map[string]string{"app": "web", "pod-template-hash": "7d4b9c"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d4b9c", UID: "1c2d3e4f"}}},
		Spec: corev1.PodSpec{NodeName: "node-17", Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.25",
			Ports:     []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.88.0.17", HostIP: "10.0.0.17",
			Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "nginx", Ready: true, Image: "nginx:1.25", ImageID: "docker.io/library/nginx@sha256:0123456789abcdef",
				ContainerID: "containerd://abcdef0123456789", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
}

// BenchmarkEncode and BenchmarkDecode compare the two formats on one pod:
// time and allocations per object, and the value's size in etcd
// ("value-bytes"), what every write and every read of the API server pays.
func BenchmarkEncode(b *testing.B) {
	for _, format := range []storageformat.MediaType{storageformat.JSON, storageformat.Protobuf} {
		b.Run(fmt.Sprint(format), func(b *testing.B) {
			codec, pod := storageformat.NewCodec(format, testScheme(b)), benchPod()
			var size int
			b.ReportAllocs()
			for b.Loop() {
				value, err := codec.Encode(pod)
				if err != nil {
					b.Fatal(err)
				}
				size = len(value)
			}
			b.ReportMetric(float64(size), "value-bytes")
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, format := range []storageformat.MediaType{storageformat.JSON, storageformat.Protobuf} {
		b.Run(fmt.Sprint(format), func(b *testing.B) {
			codec := storageformat.NewCodec(format, testScheme(b))
			value, err := codec.Encode(benchPod())
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := codec.Decode(value, &corev1.Pod{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
