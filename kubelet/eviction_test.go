package kubelet

import (
	"context"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/cri"
	"github.com/mkube/mkube/kubelet/eviction"
	"github.com/mkube/mkube/kubelet/internal/kubelettest"
	"github.com/mkube/mkube/kubelet/volumemanager"
)

// The measures are the files' bytes: an emptyDir's and a configMap
// volume's on the node's disk (the configMap's keys once, not through
// their links), a running container's writable layer from the runtime
// and its log directory.
func TestLocalStorageUsageMeasuresVolumesLayersAndLogs(t *testing.T) {
	root, logs := t.TempDir(), t.TempDir()
	rs, err := connectRuntime(context.Background(), "", cri.Options{PodCIDR: netip.MustParsePrefix("10.244.1.0/24"), NodeRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rs.close)
	k := &Kubelet{cfg: Config{NodeName: "node01", NodeRoot: root, PodLogsDir: logs}, runtime: rs, log: slog.New(slog.DiscardHandler)}
	k.volumes = newVolumeManager(k)
	pod := kubelettest.StoragePod("1Ki", "1Mi", "")
	pod.Spec.Containers = pod.Spec.Containers[:1]
	pod.Spec.Containers[0].Command = []string{"sh", "-c", "echo 12345 > /tmp/out; echo logged; sleep 3600"}

	cache := k.volumes.OnDisk(volumemanager.Dir(pod.UID, pod.Spec.Volumes[0]))
	config := k.volumes.OnDisk(volumemanager.Dir(pod.UID, pod.Spec.Volumes[1]))
	must(t, os.MkdirAll(cache, 0o755))
	must(t, os.WriteFile(filepath.Join(cache, "blob"), make([]byte, 1500), 0o644))
	if _, err := volumemanager.WriteAtomically(config, map[string]volumemanager.File{"key": {Data: []byte("value"), Mode: 0o644}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sb, err := rs.runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: criConfigs(logs).SandboxConfig(pod, 0)})
	must(t, err)
	startContainer(t, rs, pod, sb.GetPodSandboxId(), pod.Spec.Containers[0], 0)

	var u eviction.Usage
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if u, err = newEvictionManager(k).LocalStorageUsage(ctx, pod); err != nil {
			t.Fatal(err)
		}
		if u.Containers["app"] > 6 || time.Now().After(deadline) {
			break // the container has written its file and its log line
		}
	}
	if u.Volumes["cache"] != 1500 || u.Volumes["config"] != 5 {
		t.Errorf("volumes: %v, want cache 1500 and config 5 bytes", u.Volumes)
	}
	// The writable layer's 6 bytes, and the log line as CRI writes it:
	// "<RFC 3339 time> stdout F logged\n".
	if got, min := u.Containers["app"], int64(6+len(" stdout F logged\n")+20); got < min {
		t.Errorf("container app: %d bytes, want its layer's 6 and its log's at least %d", got, min-6)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
