package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// TestStaticPods (seed 003 §4.2): the kubelet runs the pods in its
// --pod-manifest-path and shows each as a mirror pod "<name>-<node>";
// deleting the mirror deletes nothing that runs and the mirror comes
// back; changing the file restarts the pod; removing it stops the pod.
func TestStaticPods(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	manifest := filepath.Join(dir, "static-web.yaml")
	write := func(image string) {
		t.Helper()
		pod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: static-web\n  labels:\n    role: myrole\nspec:\n  containers:\n  - name: web\n    image: " + image + "\n    ports:\n    - name: web\n      containerPort: 80\n      protocol: TCP\n"
		if err := os.WriteFile(manifest, []byte(pod), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("nginx:1.25")
	c := startClusterWithNodes(t, nil, kubeletNode{name: "node01",
		flags: []string{"--pod-manifest-path", dir, "--file-check-frequency", "200ms"}})
	k := newKubectl(t, c)

	field := func(path string) string {
		out, _, _ := k.kubectl(t, "get", "pod", "static-web-node01", "-o", "jsonpath="+path)
		return out
	}
	testserver.EventuallyWithin(t, 30*time.Second, "the mirror pod static-web-node01 is Running", func() (bool, string) {
		out := field("{.status.phase} {.spec.nodeName} {.metadata.ownerReferences[0].kind}")
		return out == "Running node01 Node", out
	})
	hash := field("{.metadata.annotations.kubernetes\\.io/config\\.mirror}")
	containerID := field("{.status.containerStatuses[0].containerID}")
	if len(hash) != 32 || containerID == "" {
		t.Fatalf("mirror annotation %q, containerID %q", hash, containerID)
	}
	if out := k.mustKubectl(t, "logs", "static-web-node01"); !strings.Contains(out, "start worker processes") {
		t.Errorf("kubectl logs of the mirror pod: %q", out)
	}

	// Deleting the mirror only deletes the mirror: the kubelet makes a new
	// one, and the container that runs is the same.
	oldUID := field("{.metadata.uid}")
	k.mustKubectl(t, "delete", "pod", "static-web-node01")
	testserver.EventuallyWithin(t, 30*time.Second, "a new mirror, the same container", func() (bool, string) {
		uid, id := field("{.metadata.uid}"), field("{.status.containerStatuses[0].containerID}")
		return uid != "" && uid != oldUID && id == containerID, uid + " " + id
	})

	// A changed manifest is a new static pod: a new hash, a new container.
	write("nginx:1.26")
	testserver.EventuallyWithin(t, 30*time.Second, "the changed manifest runs nginx:1.26", func() (bool, string) {
		out := field("{.status.phase} {.status.containerStatuses[0].image} {.metadata.annotations.kubernetes\\.io/config\\.mirror}")
		return strings.HasPrefix(out, "Running nginx:1.26 ") && !strings.HasSuffix(out, hash), out
	})

	// A removed manifest stops the pod and deletes its mirror.
	if err := os.Remove(manifest); err != nil {
		t.Fatal(err)
	}
	testserver.EventuallyWithin(t, 30*time.Second, "the mirror pod is gone", func() (bool, string) {
		_, errOut, code := k.kubectl(t, "get", "pod", "static-web-node01")
		return code != 0 && strings.Contains(errOut, "NotFound"), errOut
	})
}
