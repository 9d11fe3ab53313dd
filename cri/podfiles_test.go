package cri

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// What the runtime puts in a container besides its image: the files the
// kubelet binds in (written through to the node), /etc/resolv.conf from
// the sandbox's DNS config, the user of its security context, and a last
// unended log line as a partial one.
func TestAContainersPodFiles(t *testing.T) {
	root := t.TempDir()
	disk := filepath.Join(root, "default")
	const termFile = "/var/lib/kubelet/pods/uid-p/containers/c/0000beef"
	const cmFile = "/var/lib/kubelet/pods/uid-p/volumes/kubernetes.io~configmap/cfg/..2026_12_01/key"
	for name, content := range map[string]string{termFile: "", cmFile: "v1\n", "/etc/resolv.conf": "nameserver 10.0.0.2\n"} {
		p := filepath.Join(disk, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(disk, "/var/lib/kubelet/pods/uid-p/volumes/kubernetes.io~configmap/cfg/key")
	if err := os.Symlink("..2026_12_01/key", link); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Options{NodeRoot: root})
	cfg := h.podConfig("p")
	cfg.DnsConfig = &runtimeapi.DNSConfig{Servers: []string{"10.96.0.10"}, Searches: []string{"default.svc.cluster.local", "svc.cluster.local"},
		Options: []string{"ndots:5"}}
	resp, err := h.rt.RunPodSandbox(h.ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	h.pull(t, "busybox")
	c := containerConfig("c", "busybox")
	c.Command = []string{"sh", "-c", "echo -n DONE > /dev/termination-log; cat /etc/config/key; cat /etc/resolv.conf; id; echo -n last"}
	c.Mounts = []*runtimeapi.Mount{{ContainerPath: "/dev/termination-log", HostPath: termFile},
		{ContainerPath: "/etc/config/key", HostPath: filepath.Dir(cmFile) + "/../key", Readonly: true}}
	c.Linux = &runtimeapi.LinuxContainerConfig{SecurityContext: &runtimeapi.LinuxContainerSecurityContext{
		RunAsUser: &runtimeapi.Int64Value{Value: 65534}, SupplementalGroups: []int64{1234}}}
	id := h.create(t, resp.PodSandboxId, c)
	h.start(t, id)
	waitFor(t, "the exit", func() bool { return h.containerStatus(t, id).State == runtimeapi.ContainerState_CONTAINER_EXITED })
	if got, _ := os.ReadFile(filepath.Join(disk, termFile)); string(got) != "DONE" {
		t.Errorf("the node's termination-log file holds %q, want what the container wrote", got)
	}
	log, _ := os.ReadFile(h.containerStatus(t, id).LogPath)
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(string(log), "\n"), "\n") {
		_, rest, _ := strings.Cut(l, " ") // the time
		lines = append(lines, rest)
	}
	want := []string{"stdout F v1",
		"stdout F search default.svc.cluster.local svc.cluster.local", "stdout F nameserver 10.96.0.10", "stdout F options ndots:5",
		"stdout F uid=65534(nobody) gid=65534(nogroup) groups=65534(nogroup),1234",
		"stdout P last"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("log:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}

	t.Run("a sandbox without a DNS config has the node's resolv.conf", func(t *testing.T) {
		podID := h.runPod(t, "q")
		c := containerConfig("c", "busybox")
		c.Command = []string{"cat", "/etc/resolv.conf"}
		id := h.create(t, podID, c)
		h.start(t, id)
		waitFor(t, "the exit", func() bool { return h.containerStatus(t, id).State == runtimeapi.ContainerState_CONTAINER_EXITED })
		if log, _ := os.ReadFile(h.containerStatus(t, id).LogPath); !strings.Contains(string(log), "stdout F nameserver 10.0.0.2\n") {
			t.Errorf("log %q, want the node's nameserver", log)
		}
	})
}

// A bound file keeps its inode: a ConfigMap update, which replaces the
// file, does not reach it, while the node's file is what it reads as
// long as it is there.
func TestABoundFileKeepsTheFileItWasBoundTo(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "..v1", "key")
	os.MkdirAll(filepath.Dir(old), 0o755)
	os.WriteFile(old, []byte("v1"), 0o644)
	link := filepath.Join(dir, "key")
	os.Symlink("..v1/key", link)
	b, err := bindFile(link)
	if err != nil {
		t.Fatal(err)
	}
	// The atomic writer's update: a new version, the link swapped, the
	// old version removed.
	os.MkdirAll(filepath.Join(dir, "..v2"), 0o755)
	os.WriteFile(filepath.Join(dir, "..v2", "key"), []byte("v2"), 0o644)
	os.Remove(link)
	os.Symlink("..v2/key", link)
	os.RemoveAll(filepath.Dir(old))
	if data, err := b.ReadFile(""); err != nil || string(data) != "v1" {
		t.Errorf("after the update the bound file reads %q, %v; want the content it had, v1", data, err)
	}
	if exists, isDir := b.Stat(""); !exists || isDir {
		t.Errorf("Stat = %v, %v: the mount still holds a file", exists, isDir)
	}
}

// An image volume shows the image's files, read-only, all of them or one
// directory.
func TestAnImageVolume(t *testing.T) {
	h := newHarness(t, Options{})
	podID := h.runPod(t, "p")
	h.pull(t, "busybox")
	h.pull(t, "registry.k8s.io/e2e-test-images/kitten:1.8")
	c := containerConfig("c", "busybox")
	c.Command = []string{"sh", "-c", "cat /volume/data.json; ls /etc-only; echo x > /volume/new"}
	c.Mounts = []*runtimeapi.Mount{
		{ContainerPath: "/volume", Image: &runtimeapi.ImageSpec{Image: "registry.k8s.io/e2e-test-images/kitten:1.8"}},
		{ContainerPath: "/etc-only", Image: &runtimeapi.ImageSpec{Image: "registry.k8s.io/e2e-test-images/kitten:1.8"}, ImageSubPath: "etc"}}
	id := h.create(t, podID, c)
	h.start(t, id)
	waitFor(t, "the exit", func() bool { return h.containerStatus(t, id).State == runtimeapi.ContainerState_CONTAINER_EXITED })
	log, _ := os.ReadFile(h.containerStatus(t, id).LogPath)
	for _, want := range []string{`stdout F   "image": "kitten.jpg"`, "stdout F alpine-release", "stdout F os-release",
		"stderr F sh: can't create /volume/new: Read-only file system"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("log:\n%s\nwant a line %q", log, want)
		}
	}
}
