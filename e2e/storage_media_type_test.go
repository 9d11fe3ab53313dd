package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/internal/testserver"
)

// With --storage-media-type application/vnd.kubernetes.protobuf the API
// server stores objects as Kubernetes does: etcdctl shows binary, `mkube
// etcd get` shows the object, and the cluster runs as ever (a Deployment's
// pods are created and run). Restarted on the same data directory with
// the default JSON, the server reads the protobuf objects, and its next
// write of one stores JSON.
func TestProtobufStorageIsReadableWithMkubeEtcdGet(t *testing.T) {
	t.Parallel()
	etcdctl := findEtcdctl(t)
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	c := startCluster(t, []string{"--storage-media-type", "application/vnd.kubernetes.protobuf", "--etcd-client-url", etcdURL}, "node01")
	k := newKubectl(t, c)
	k.mustKubectl(t, "create", "deployment", "web", "--image", "nginx:1.25", "--replicas", "2")
	runningPods := func() (bool, string) {
		var pods corev1.PodList
		c.do("GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb", "", nil, &pods)
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == 2, fmt.Sprintf("%d of %d pods running", running, len(pods.Items))
	}
	testserver.EventuallyWithin(t, 60*time.Second, "the Deployment's 2 pods run", runningPods)

	const key = "/registry/deployments/default/web"
	raw, stderr, code := runCommand(t, exec.Command(etcdctl, "--endpoints", etcdURL, "get", key, "--print-value-only"))
	if code != 0 {
		t.Fatalf("etcdctl get: exit %d: %s", code, stderr)
	}
	if !strings.HasPrefix(raw, "k8s\x00") || json.Valid(bytes.TrimSpace([]byte(raw))) || !strings.Contains(raw, "apps/v1") {
		t.Errorf("etcdctl shows no protobuf value of apps/v1 (the magic k8s\\x00, then binary): %q", raw)
	}

	mkube := func(args ...string) string {
		t.Helper()
		out, stderr, code := runCommand(t, exec.Command(filepath.Join(binDir, "mkube"), append([]string{"etcd"}, append(args, "--etcd-endpoints", etcdURL)...)...))
		if code != 0 {
			t.Fatalf("mkube etcd %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		return out
	}
	view := mkube("get", key)
	for _, want := range []string{"# " + key + ": stored as application/vnd.kubernetes.protobuf", "apiVersion: apps/v1", "kind: Deployment", "replicas: 2", "image: nginx:1.25"} {
		if !strings.Contains(view, want) {
			t.Errorf("mkube etcd get %s lacks %q:\n%s", key, want, view)
		}
	}
	var d appsv1.Deployment
	if err := json.Unmarshal([]byte(mkube("get", key, "-o", "json")), &d); err != nil || d.Name != "web" || *d.Spec.Replicas != 2 {
		t.Errorf("mkube etcd get -o json: %v %+v", err, d.ObjectMeta)
	}
	keys := mkube("get", "/registry/pods/default/", "--prefix", "--keys-only")
	if n := strings.Count(keys, "\n"); n != 2 || strings.Count(keys, "application/vnd.kubernetes.protobuf") != 2 {
		t.Errorf("mkube etcd get --prefix --keys-only /registry/pods/default/: want 2 protobuf pods:\n%s", keys)
	}

	// The same data directory under the default, JSON.
	api := c.procs["apiserver"]
	api.Signal(os.Interrupt)
	api.Wait()
	c.startAPIServer(filepath.Join(c.dir, "etcd"), "--etcd-client-url", etcdURL)
	c.waitReady()
	if got := k.mustKubectl(t, "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"); got != "2" {
		t.Errorf("the JSON server reads the protobuf Deployment: replicas %q", got)
	}
	k.mustKubectl(t, "scale", "deployment", "web", "--replicas", "3")
	raw, stderr, code = runCommand(t, exec.Command(etcdctl, "--endpoints", etcdURL, "get", key, "--print-value-only"))
	if code != 0 || !json.Valid(bytes.TrimSpace([]byte(raw))) || !strings.Contains(raw, `"replicas":3`) {
		t.Errorf("after a write by the JSON server, etcdctl shows: exit %d %s %q", code, stderr, raw)
	}
	if view := mkube("get", key); !strings.Contains(view, "stored as application/json") || !strings.Contains(view, "replicas: 3") {
		t.Errorf("mkube etcd get after the JSON write:\n%s", view)
	}
}
