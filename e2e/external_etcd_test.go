package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Two API servers share one etcd: the first runs it embedded and serves
// its client port, the second is pointed at it with --etcd-servers. A
// write through either is seen, and watched, through the other: etcd, not
// the API server, is the source of truth.
func TestTwoAPIServersShareOneEtcd(t *testing.T) {
	t.Parallel()
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	a := &cluster{t: t, URL: fmt.Sprintf("http://127.0.0.1:%d", freePort(t)), logs: map[string]string{}}
	a.startAPIServer(filepath.Join(t.TempDir(), "etcd"), "--etcd-client-url", etcdURL)
	a.waitReady()
	b := &cluster{t: t, URL: fmt.Sprintf("http://127.0.0.1:%d", freePort(t)), logs: map[string]string{}}
	b.startAPIServer(t.TempDir(), "--etcd-servers", etcdURL)
	b.waitReady()
	t.Cleanup(func() {
		if t.Failed() {
			a.dumpLogs()
			b.dumpLogs()
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	events := a.watch(ctx, "/api/v1/namespaces/default/pods?resourceVersion=0")
	if code := b.do("POST", "/api/v1/namespaces/default/pods", "application/json",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"shared"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`, nil); code != 201 {
		t.Fatalf("create through the second server: %d", code)
	}
	var pod corev1.Pod
	if code := a.do("GET", "/api/v1/namespaces/default/pods/shared", "", nil, &pod); code != 200 {
		t.Fatalf("read through the first server: %d", code)
	}
	select {
	case ev := <-events:
		if ev.Type != "ADDED" || ev.Object.Metadata.Name != "shared" || ev.Object.Metadata.ResourceVersion != pod.ResourceVersion {
			t.Fatalf("watch on the first server: %+v", ev)
		}
	case <-ctx.Done():
		t.Fatal("the first server's watch never saw the second server's write")
	}
}

func portOf(url string) string {
	return url[len("http://127.0.0.1:"):]
}
