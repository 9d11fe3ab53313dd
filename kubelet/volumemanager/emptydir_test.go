package volumemanager

import (
	"context"
	"log/slog"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/internal/mounttable"
)

func TestMemoryVolumeSize(t *testing.T) {
	node := resource.MustParse("8Gi")
	limited := func(limits ...string) *corev1.Pod {
		pod := &corev1.Pod{}
		for _, l := range limits {
			c := corev1.Container{}
			if l != "" {
				c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(l)}
			}
			pod.Spec.Containers = append(pod.Spec.Containers, c)
		}
		return pod
	}
	memory := func(sizeLimit string) corev1.Volume {
		v := corev1.Volume{VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}
		if sizeLimit != "" {
			v.EmptyDir.SizeLimit = ptr.To(resource.MustParse(sizeLimit))
		}
		return v
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		v    corev1.Volume
		want string
	}{
		{"a sizeLimit below the pod's memory limit is the size", limited("128Mi"), memory("64Mi"), "64Mi"},
		{"without a sizeLimit the pod's memory limit is the size", limited("128Mi", "128Mi"), memory(""), "256Mi"},
		{"a sizeLimit above the pod's memory limit is cut to it", limited("128Mi"), memory("1Gi"), "128Mi"},
		{"a pod with a container without a memory limit has no pod limit", limited("128Mi", ""), memory(""), "8Gi"},
		{"nothing set: the node's allocatable memory", limited(""), memory(""), "8Gi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := memoryVolumeSize(tc.pod, tc.v, &node)
			if want := resource.MustParse(tc.want); got.Cmp(want) != 0 {
				t.Errorf("size = %s, want %s", got.String(), tc.want)
			}
		})
	}
}

// A Memory emptyDir is mounted as a tmpfs of its size in the node's
// mount table, its mount point empty on the disk, and unmounted with
// the pod's volumes.
func TestMemoryEmptyDirIsATmpfsMountOfTheNode(t *testing.T) {
	root := t.TempDir()
	memory := resource.MustParse("8Gi")
	k := NewManager(Options{NodeName: "node01", NodeRoot: root, Memory: &memory, Log: slog.New(slog.DiscardHandler)})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "u1"}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "mem", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Mi"))}}},
	}}}
	if err := k.setUpVolumes(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	point := "/var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/mem"
	ms, err := mounttable.Read(k.OnDisk("/"))
	if want := []mounttable.Mount{{Source: "tmpfs", Point: point, Type: "tmpfs", Size: 1 << 20}}; err != nil || len(ms) != 1 || ms[0] != want[0] {
		t.Errorf("mount table: %+v, %v; want %+v", ms, err, want)
	}
	if entries, err := os.ReadDir(k.OnDisk(point)); err != nil || len(entries) != 0 {
		t.Errorf("mount point: %v, %v; want an empty directory", entries, err)
	}
	k.TearDownVolumes(pod.UID)
	if ms, _ := mounttable.Read(k.OnDisk("/")); len(ms) != 0 {
		t.Errorf("after teardown the table still has %+v", ms)
	}
}
