package kubelet

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubecontainer "github.com/mkube/mkube/kubelet/container"
	"github.com/mkube/mkube/kubelet/envvars"
	"github.com/mkube/mkube/kubelet/internal/kubelettest"
)

// The downward API's values (downwardapi.go), and a container's
// environment made with them (package envvars).

func TestResourceField(t *testing.T) {
	allocatable := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi")}
	c := corev1.Container{Name: "app", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
	}}
	bare := corev1.Container{Name: "bare"}
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{c, bare}}}
	for _, tc := range []struct {
		name      string
		c         corev1.Container
		resource  string
		divisor   string
		container string
		want      string
	}{
		{"requests.cpu with divisor 1m is the millicores", c, "requests.cpu", "1m", "", "250"},
		{"requests.cpu with the default divisor 1 rounds up to whole cores", c, "requests.cpu", "", "", "1"},
		{"limits.cpu with divisor 1m", c, "limits.cpu", "1m", "", "500"},
		{"limits.cpu with divisor 100m", c, "limits.cpu", "100m", "", "5"},
		{"requests.memory with the default divisor is bytes", c, "requests.memory", "", "", "67108864"},
		{"limits.memory with divisor 1Mi", c, "limits.memory", "1Mi", "", "128"},
		{"limits.memory with divisor 1M rounds up", c, "limits.memory", "1M", "", "135"},
		{"an unset memory limit is the node's allocatable", bare, "limits.memory", "1Mi", "", "8192"},
		{"an unset cpu limit is the node's allocatable", bare, "limits.cpu", "", "", "4"},
		{"an unset ephemeral-storage limit is the node's allocatable", bare, "limits.ephemeral-storage", "1Gi", "", "100"},
		{"an unset request is 0", bare, "requests.cpu", "1m", "", "0"},
		{"containerName reads another container of the pod", bare, "limits.memory", "1Mi", "app", "128"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel := &corev1.ResourceFieldSelector{Resource: tc.resource, ContainerName: tc.container}
			if tc.divisor != "" {
				sel.Divisor = resource.MustParse(tc.divisor)
			}
			got, err := resourceField(pod, tc.c, sel, allocatable)
			if err != nil || got != tc.want {
				t.Errorf("resourceField(%s, divisor %q) = %q, %v; want %q", tc.resource, tc.divisor, got, err, tc.want)
			}
		})
	}
	for _, bad := range []string{"limits.pods", "requests", "usage.cpu"} {
		if got, err := resourceField(pod, c, &corev1.ResourceFieldSelector{Resource: bad}, allocatable); err == nil {
			t.Errorf("resourceField(%s) = %q, want an error", bad, got)
		}
	}
}

func TestPodField(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "1234",
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"team": "blue"}},
		Spec: corev1.PodSpec{NodeName: "node01", ServiceAccountName: "default"},
	}
	for path, want := range map[string]string{
		"metadata.name": "web", "metadata.namespace": "shop", "metadata.uid": "1234",
		"metadata.labels['app']": "web", "metadata.annotations['team']": "blue", "metadata.labels['missing']": "",
		"spec.nodeName": "node01", "spec.serviceAccountName": "default",
		"status.hostIP": "192.168.1.10", "status.hostIPs": "192.168.1.10", "status.podIP": "10.244.1.5", "status.podIPs": "10.244.1.5",
	} {
		if got, err := podField(pod, path, "192.168.1.10", "10.244.1.5"); err != nil || got != want {
			t.Errorf("podField(%s) = %q, %v; want %q", path, got, err, want)
		}
	}
	if _, err := podField(pod, "spec.hostname", "", ""); err == nil || err.Error() != "field label not supported: spec.hostname" {
		t.Errorf("podField(spec.hostname) error = %v", err)
	}
}

func TestContainerEnvResolvesTheDownwardAPI(t *testing.T) {
	env := &envvars.Builder{NodeIP: "192.168.1.10", Services: func() []*corev1.Service { return nil }, PodField: podField, ResourceField: resourceField}
	c := corev1.Container{Name: "app", Env: []corev1.EnvVar{
		{Name: "MY_POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "MY_POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		{Name: "MY_NODE_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.hostIP"}}},
		{Name: "MY_CPU_REQUEST", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "requests.cpu", Divisor: resource.MustParse("1m")}}},
	}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
	got, err := env.ContainerEnv(context.Background(), pod, &kubecontainer.PodSandbox{IP: "10.244.1.5"}, c)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"MY_POD_NAME=web", "MY_POD_IP=10.244.1.5", "MY_NODE_IP=192.168.1.10", "MY_CPU_REQUEST=0"}
	if g, w := kubelettest.EnvLines(got), strings.Join(want, "\n"); g != w {
		t.Errorf("got\n%s\nwant\n%s", g, w)
	}
}
