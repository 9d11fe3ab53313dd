package volumemanager

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// The modes Kubernetes' volume conformance tests read from inside the
// container (agnhost mounttest): an emptyDir is drwxrwxrwx whatever the
// kubelet's umask, a payload volume's files have the volume's
// defaultMode (0644 if unset) or the item's mode, reached through the
// atomic writer's links, and a subPath made for a mount has its volume's
// mode.
func TestVolumesHaveKubernetesModes(t *testing.T) {
	root := t.TempDir()
	k := NewManager(Options{NodeName: "node01", NodeRoot: root, Sources: podNameSource{}, SubPath: plainSubPath, Log: slog.New(slog.DiscardHandler),
		Clock: clocktesting.NewFakeClock(time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC))})
	podname := corev1.DownwardAPIVolumeFile{Path: "podname", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}
	withMode := podname
	withMode.Path, withMode.Mode = "sub/podname", ptr.To[int32](0o400)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1"}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "podinfo", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{podname, withMode}}}},
		{Name: "private", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			DefaultMode: ptr.To[int32](0o440), Items: []corev1.DownwardAPIVolumeFile{podname}}}},
	}}}
	if err := k.setUpVolumes(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	c := corev1.Container{Name: "app", VolumeMounts: []corev1.VolumeMount{{Name: "cache", MountPath: "/out", SubPath: "logs/app"}}}
	if err := k.PrepareSubPaths(pod, c, nil); err != nil {
		t.Fatal(err)
	}
	volumes := "/var/lib/kubelet/pods/u1/volumes/"
	for _, tc := range []struct {
		name, path string
		want       fs.FileMode
	}{
		{"an emptyDir is drwxrwxrwx", "kubernetes.io~empty-dir/cache", fs.ModeDir | 0o777},
		{"a subPath made for a mount has its emptyDir's mode", "kubernetes.io~empty-dir/cache/logs/app", fs.ModeDir | 0o777},
		{"a payload volume's directory is an emptyDir's", "kubernetes.io~downward-api/podinfo", fs.ModeDir | 0o777},
		{"a file without a mode has the default defaultMode, 0644", "kubernetes.io~downward-api/podinfo/podname", 0o644},
		{"an item's mode is its file's", "kubernetes.io~downward-api/podinfo/sub/podname", 0o400},
		{"defaultMode is every file's", "kubernetes.io~downward-api/private/podname", 0o440},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fi, err := os.Stat(k.OnDisk(path.Join(volumes, tc.path))) // through the ..data links
			if err != nil || fi.Mode() != tc.want {
				t.Errorf("mode %v, %v; want %v", modeOf(fi), err, tc.want)
			}
		})
	}
}

func modeOf(fi os.FileInfo) fs.FileMode {
	if fi == nil {
		return 0
	}
	return fi.Mode()
}
