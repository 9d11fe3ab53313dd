package apiserver_test

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/internal/testserver"
)

// names keeps the names and data of the ConfigMaps it is fed.
type names struct {
	mu       sync.Mutex
	data     map[string]string
	replaced int
}

func (n *names) Replace(objs []runtime.Object) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.replaced++
	n.data = map[string]string{}
	for _, o := range objs {
		cm := o.(*corev1.ConfigMap)
		n.data[cm.Namespace+"/"+cm.Name] = cm.Data["v"]
	}
}

func (n *names) Update(obj, prev runtime.Object) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if obj == nil {
		cm := prev.(*corev1.ConfigMap)
		delete(n.data, cm.Namespace+"/"+cm.Name)
		return
	}
	cm := obj.(*corev1.ConfigMap)
	n.data[cm.Namespace+"/"+cm.Name] = cm.Data["v"]
}

func (n *names) lists() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.replaced
}

func (n *names) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for k, v := range n.data {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// A follower has what was stored before Follow returns, then every change,
// in order, as an informer would over HTTP.
func TestAFollowerListsThenFollowsChanges(t *testing.T) {
	s := testserver.StartServer(t)
	configMap := func(name, v string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"v":%q}}`, name, v)
	}
	const path = "/api/v1/namespaces/default/configmaps"
	if code := s.Do(http.MethodPost, path, "application/json", configMap("before", "1"), nil); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	// The server's own ConfigMap, for aggregated API servers, is there too.
	const own = "kube-system/extension-apiserver-authentication="
	f := &names{}
	if err := s.API.Follow(t.Context(), corev1.SchemeGroupVersion.WithResource("configmaps"), f); err != nil {
		t.Fatal(err)
	}
	if got := f.String(); got != "default/before=1,"+own || f.lists() != 1 {
		t.Fatalf("when Follow returns: %q after %d lists, want default/before=1,%s after one", got, f.lists(), own)
	}
	for _, step := range []struct{ method, path, body string }{
		{http.MethodPost, path, configMap("after", "2")},
		{http.MethodPut, path + "/before", configMap("before", "3")},
		{http.MethodDelete, path + "/after", ""},
	} {
		if code := s.Do(step.method, step.path, "application/json", step.body, nil); code >= 300 {
			t.Fatalf("%s %s: %d", step.method, step.path, code)
		}
	}
	testserver.Eventually(t, "the follower has every change", func() (bool, string) {
		got := f.String()
		return got == "default/before=3,"+own, got
	})
	if n := f.lists(); n != 1 {
		t.Errorf("listed %d times, want once: the watch cache had every event", n)
	}
}
