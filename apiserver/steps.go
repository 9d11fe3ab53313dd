package apiserver

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// seedStep names the step of seed 000's pod creation flow a write is, so
// the API server's log reads like the tutorial.
func seedStep(info RequestInfo, obj runtime.Object) (int, string) {
	pod, isPod := obj.(*corev1.Pod)
	switch {
	case isPod && info.Verb == "create" && info.Subresource == "" && metav1.GetControllerOf(pod) != nil:
		return 7, "stored the pod a controller created in etcd"
	case isPod && info.Verb == "create" && info.Subresource == "":
		return 3, "stored the new pod in etcd and acknowledged the client"
	case isPod && info.Subresource == "binding":
		return 10, "stored the scheduler's binding: pod.spec.nodeName is set"
	case isPod && info.Subresource == "status":
		return 13, "stored the pod status the kubelet reported"
	case info.Verb == "create" && info.Subresource == "" && (info.Resource == "replicasets" || info.Resource == "deployments"):
		return 3, "stored the new workload in etcd and acknowledged the client"
	}
	return 0, ""
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
