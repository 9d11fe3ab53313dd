package cri

import (
	"os"
	"path/filepath"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/internal/mounttable"
)

const memDir = "/var/lib/kubelet/pods/uid-p/volumes/kubernetes.io~empty-dir/mem"

// memoryHarness is a runtime whose node ("default": the test pods name
// none) has a 10-byte tmpfs mounted at memDir, as the kubelet mounts an
// emptyDir of medium Memory.
func memoryHarness(t *testing.T) (*harness, string) {
	t.Helper()
	root := t.TempDir()
	disk := filepath.Join(root, "default")
	if err := os.MkdirAll(filepath.Join(disk, memDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := mounttable.Add(disk, mounttable.Mount{Source: "tmpfs", Point: memDir, Type: "tmpfs", Size: 10}); err != nil {
		t.Fatal(err)
	}
	return newHarness(t, Options{NodeRoot: root}), disk
}

// sleeper is a started busybox container of pod that mounts the mounts.
func (h *harness) sleeper(t *testing.T, podID, name string, mounts ...*runtimeapi.Mount) string {
	t.Helper()
	h.pull(t, "busybox")
	cfg := containerConfig(name, "busybox")
	cfg.Command = []string{"sleep", "3600"}
	cfg.Mounts = mounts
	id := h.create(t, podID, cfg)
	h.start(t, id)
	return id
}

func (h *harness) exec(t *testing.T, id, script string) (stdout, stderr string) {
	t.Helper()
	r, err := h.rt.ExecSync(h.ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: []string{"sh", "-c", script}, Timeout: 1})
	if err != nil {
		t.Fatalf("exec %q: %v", script, err)
	}
	return string(r.Stdout), string(r.Stderr)
}

func (h *harness) memoryOf(t *testing.T, id string) uint64 {
	t.Helper()
	resp, err := h.rt.ContainerStats(h.ctx, &runtimeapi.ContainerStatsRequest{ContainerId: id})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetStats().GetMemory().GetWorkingSetBytes().GetValue()
}

// A tmpfs holds its size and no more: the write that does not fit is
// cut short with ENOSPC, its files are the pod's containers' to share
// but never on the node's disk, and their bytes are the writer's memory.
func TestMemoryVolumeIsATmpfsOfItsSize(t *testing.T) {
	h, disk := memoryHarness(t)
	podID := h.runPod(t, "p")
	mem := &runtimeapi.Mount{ContainerPath: "/mem", HostPath: memDir}
	writer := h.sleeper(t, podID, "writer", mem)
	reader := h.sleeper(t, podID, "reader", mem, &runtimeapi.Mount{ContainerPath: "/sub", HostPath: memDir + "/pod-a"})

	out, errOut := h.exec(t, writer, "echo 0123 > /mem/a; echo rc=$?; echo 0123456789 >> /mem/a; echo rc=$?")
	if out != "rc=0\nrc=1\n" || errOut != "sh: write error: No space left on device\n" {
		t.Errorf("filling the tmpfs: stdout %q stderr %q", out, errOut)
	}
	if out, _ := h.exec(t, reader, "cat /mem/a; ls /mem"); out != "0123\n01234a\npod-a\n" {
		t.Errorf("the other container reads %q, want the 10 bytes that fit and the subPath directory made for it", out)
	}
	if entries, _ := os.ReadDir(filepath.Join(disk, memDir)); len(entries) != 0 {
		t.Errorf("the node's disk holds %v under the tmpfs' mount point, want nothing", entries)
	}
	if got := h.memoryOf(t, writer); got != residentBase+10 {
		t.Errorf("the writer's memory: %d bytes, want its program's %d and the tmpfs' 10", got, residentBase)
	}
	if got := h.memoryOf(t, reader); got != residentBase {
		t.Errorf("the reader's memory: %d bytes, want its program's %d: it wrote nothing", got, residentBase)
	}
	if _, errOut := h.exec(t, writer, "rm /mem/a; echo ok > /mem/b"); errOut != "" {
		t.Errorf("after rm there is room again, but: %q", errOut)
	}
}

// The writable layer is what the container wrote outside its mounts:
// not the image's files it left alone, nor what it wrote to a volume.
func TestWritableLayerCountsWhatTheContainerWrote(t *testing.T) {
	h, _ := memoryHarness(t)
	podID := h.runPod(t, "p")
	id := h.sleeper(t, podID, "c", &runtimeapi.Mount{ContainerPath: "/mem", HostPath: memDir})
	h.exec(t, id, "echo hello > /tmp/a; echo 12345 > /mem/x; cat /etc/hostname > /dev/null")
	resp, err := h.rt.ContainerStats(h.ctx, &runtimeapi.ContainerStatsRequest{ContainerId: id})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetStats().GetWritableLayer().GetUsedBytes().GetValue(); got != 6 {
		t.Errorf("writable layer: %d bytes, want 6 (/tmp/a)", got)
	}
}
