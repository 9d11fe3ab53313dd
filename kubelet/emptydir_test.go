package kubelet

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

// A Memory emptyDir is mounted as a tmpfs of its size in the node's
// mount table, its mount point empty on the disk, and unmounted with
// the pod's volumes.
func TestMemoryEmptyDirIsATmpfsMountOfTheNode(t *testing.T) {
	root := t.TempDir()
	capacity, _ := Capacity("4", "8Gi", 110)
	k := &Kubelet{cfg: Config{NodeName: "node01", NodeRoot: root, Capacity: capacity}, log: slog.New(slog.DiscardHandler)}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "u1"}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "mem", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Mi"))}}},
	}}}
	if err := k.setUpVolumes(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	point := "/var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/mem"
	ms, err := mounttable.Read(k.onDisk("/"))
	if want := []mounttable.Mount{{Source: "tmpfs", Point: point, Type: "tmpfs", Size: 1 << 20}}; err != nil || len(ms) != 1 || ms[0] != want[0] {
		t.Errorf("mount table: %+v, %v; want %+v", ms, err, want)
	}
	if entries, err := os.ReadDir(k.onDisk(point)); err != nil || len(entries) != 0 {
		t.Errorf("mount point: %v, %v; want an empty directory", entries, err)
	}
	k.tearDownVolumes(pod.UID)
	if ms, _ := mounttable.Read(k.onDisk("/")); len(ms) != 0 {
		t.Errorf("after teardown the table still has %+v", ms)
	}
}
