package cri

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/internal/mounttable"
)

// What `agnhost mounttest` sees in a container is what the node's disk
// and the runtime's tmpfs hold: the modes the kubelet gave a volume's
// files (through the atomic writer's links), the disk's real filesystem
// type, a file the process creates with the mode it asks for (not cut
// by the runtime's own umask), and a tmpfs' sticky 1777 root, which a
// subPath made in it has too.
func TestMounttestSeesTheModesOfTheNodesFiles(t *testing.T) {
	root := t.TempDir()
	disk := filepath.Join(root, "default")
	if err := os.MkdirAll(filepath.Join(disk, memDir), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := mounttable.Add(disk, mounttable.Mount{Source: "tmpfs", Point: memDir, Type: "tmpfs", Size: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Options{NodeRoot: root})
	config := "/var/lib/kubelet/pods/uid-p/volumes/kubernetes.io~configmap/config"
	data := filepath.Join(disk, config, "..2026_12_01_14_00_00.000000000")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "data-1"), []byte("value-1"), 0o400); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"..data": filepath.Base(data), "data-1": "..data/data-1"} {
		if err := os.Symlink(target, filepath.Join(disk, config, link)); err != nil {
			t.Fatal(err)
		}
	}
	cache := "/var/lib/kubelet/pods/uid-p/volumes/kubernetes.io~empty-dir/cache"
	if err := os.MkdirAll(filepath.Join(disk, cache), 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(disk, cache), 0o777)
	var st syscall.Statfs_t
	if err := syscall.Statfs(disk, &st); err != nil {
		t.Fatal(err)
	}

	podID := h.runPod(t, "p")
	h.pull(t, "registry.k8s.io/e2e-test-images/agnhost:2.66")
	cfg := containerConfig("c", "registry.k8s.io/e2e-test-images/agnhost:2.66")
	cfg.Mounts = []*runtimeapi.Mount{
		{ContainerPath: "/etc/config", HostPath: config, Readonly: true},
		{ContainerPath: "/cache", HostPath: cache},
		{ContainerPath: "/mem", HostPath: memDir},
		{ContainerPath: "/sub", HostPath: memDir + "/made"},
	}
	id := h.create(t, podID, cfg)
	h.start(t, id)

	for _, tc := range []struct{ name, flags, want string }{
		{"a ConfigMap key through its links", "--file_mode=/etc/config/data-1 --file_owner=/etc/config/data-1 --file_content=/etc/config/data-1",
			"mode of file \"/etc/config/data-1\": -r--------\nowner UID of \"/etc/config/data-1\": " + strconv.Itoa(os.Getuid()) +
				"\nowner GID of \"/etc/config/data-1\": " + strconv.Itoa(os.Getgid()) + "\ncontent of file \"/etc/config/data-1\": value-1\n"},
		{"an emptyDir on the node's disk, and a 0666 file made in it", "--fs_type=/cache --new_file_0666=/cache/f --file_perm=/cache/f --file_mode=/cache",
			"mount type of \"/cache\": " + strconv.FormatInt(int64(st.Type), 10) + "\ncontent of file \"/cache/f\": mount-tester new file\n\n" +
				"mode of file \"/cache\": drwxrwxrwx\nperms of file \"/cache/f\": -rw-rw-rw-\n"},
		{"a tmpfs, and a 0660 file made in it", "--fs_type=/mem --new_file_0660=/mem/f --file_perm=/mem/f --file_mode=/mem",
			"mount type of \"/mem\": tmpfs\ncontent of file \"/mem/f\": mount-tester new file\n\nmode of file \"/mem\": dtrwxrwxrwx\nperms of file \"/mem/f\": -rw-rw----\n"},
		{"a subPath of the tmpfs has its root's mode", "--file_mode=/sub", "mode of file \"/sub\": dtrwxrwxrwx\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if out, errOut := h.exec(t, id, "/agnhost mounttest "+tc.flags); out != tc.want || errOut != "" {
				t.Errorf("stdout:\n%s\nwant:\n%s\nstderr %q", out, tc.want, errOut)
			}
		})
	}
	if fi, err := os.Stat(filepath.Join(disk, cache, "f")); err != nil || fi.Mode() != 0o666 {
		t.Errorf("the file on the node's disk: %v; want it -rw-rw-rw-", err)
	}
}
