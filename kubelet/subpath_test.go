package kubelet

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSubPathOf(t *testing.T) {
	env := []corev1.EnvVar{{Name: "POD_NAME", Value: "web-1"}, {Name: "EMPTY"}, {Name: "UP", Value: ".."}, {Name: "ROOT", Value: "/etc"}}
	for _, tc := range []struct {
		name    string
		mount   corev1.VolumeMount
		want    string
		wantErr string
	}{
		{"a mount without a subPath shows the whole volume", corev1.VolumeMount{}, "", ""},
		{"a subPath is taken as written", corev1.VolumeMount{SubPath: "a/b"}, "a/b", ""},
		{"a subPathExpr expands $(VAR) from the container's environment",
			corev1.VolumeMount{SubPathExpr: "logs/$(POD_NAME)"}, "logs/web-1", ""},
		{"$$ escapes a reference, as in env values", corev1.VolumeMount{SubPathExpr: "$$(POD_NAME)"}, "$(POD_NAME)", ""},
		{"shell syntax is not expanded", corev1.VolumeMount{SubPathExpr: "$POD_NAME"}, "$POD_NAME", ""},
		{"an undefined variable is an error, as the kubelet words it",
			corev1.VolumeMount{SubPathExpr: "$(NOPE)/$(ALSO)"}, "", "missing value for ALSO, NOPE"},
		{"an empty variable counts as missing", corev1.VolumeMount{SubPathExpr: "x/$(EMPTY)"}, "", "missing value for EMPTY"},
		{"an expansion to an absolute path is refused",
			corev1.VolumeMount{SubPathExpr: "$(ROOT)"}, "", "error SubPath `/etc` must not be an absolute path"},
		{"an expansion that climbs out of the volume is refused",
			corev1.VolumeMount{SubPathExpr: "$(UP)/x"}, "", "unable to provision SubPath `../x`: must not contain '..'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := subPathOf(tc.mount, env)
			if errText(err) != tc.wantErr || got != tc.want {
				t.Errorf("subPathOf = %q, %v; want %q, %q", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// PrepareSubPaths makes the directory a subPathExpr names in a volume on
// the node's disk, leaves a tmpfs' to the runtime, and the CRI mount is
// then that directory.
func TestPrepareSubPathsMakesTheDirectoryTheMountShows(t *testing.T) {
	root := t.TempDir()
	k := &Kubelet{cfg: Config{NodeName: "node01", NodeRoot: root}, log: slog.New(slog.DiscardHandler)}
	k.volumes = newVolumeManager(k)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", UID: "u1"}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "shared", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "mem", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
	}}}
	c := corev1.Container{Name: "app", VolumeMounts: []corev1.VolumeMount{
		{Name: "shared", MountPath: "/out", SubPathExpr: "$(POD_NAME)"},
		{Name: "mem", MountPath: "/mem", SubPathExpr: "$(POD_NAME)"},
	}}
	env := []corev1.EnvVar{{Name: "POD_NAME", Value: "web-1"}}
	if err := k.volumes.PrepareSubPaths(pod, c, env); err != nil {
		t.Fatal(err)
	}
	shared := "/var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/shared/web-1"
	if fi, err := os.Stat(k.volumes.OnDisk(shared)); err != nil || !fi.IsDir() {
		t.Errorf("the subPath directory on the disk: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "node01", "var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/mem/web-1")); err == nil {
		t.Error("the tmpfs' subPath was made on the disk, which the tmpfs hides")
	}
	mounts := volumeMounts(pod, c, env)
	if len(mounts) != 2 || mounts[0].HostPath != shared || mounts[0].ContainerPath != "/out" {
		t.Errorf("CRI mounts: %v, want /out from %s", mounts, shared)
	}
	if err := k.volumes.PrepareSubPaths(pod, c, nil); errText(err) != "missing value for POD_NAME" {
		t.Errorf("without POD_NAME: %v", err)
	}
}
