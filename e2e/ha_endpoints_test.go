package e2e

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// stop ends the host's API server cleanly (SIGINT, as Ctrl-C or docker
// stop's SIGTERM): it says goodbye before it exits.
func (m *haMember) stop() {
	m.t.Helper()
	if err := m.procs["apiserver"].Signal(os.Interrupt); err != nil {
		m.t.Fatal(err)
	}
	m.procs["apiserver"].Wait()
}

// kubernetesEndpoints is what default/kubernetes's Endpoints and its
// EndpointSlice list through m, as "IP:PORT,..." each, or why not.
func (m *haMember) kubernetesEndpoints() (endpoints, slice string, err error) {
	var ep struct {
		Subsets []struct {
			Addresses []struct{ IP string }
			Ports     []struct{ Port int }
		}
	}
	if code := m.do("GET", "/api/v1/namespaces/default/endpoints/kubernetes", "", nil, &ep); code != 200 {
		return "", "", fmt.Errorf("GET endpoints kubernetes through %s: %d", m.name, code)
	}
	var addrs []string
	for _, s := range ep.Subsets {
		for _, a := range s.Addresses {
			for _, p := range s.Ports {
				addrs = append(addrs, fmt.Sprintf("%s:%d", a.IP, p.Port))
			}
		}
	}
	var slices struct {
		Items []struct {
			Endpoints []struct{ Addresses []string }
			Ports     []struct{ Port int }
		}
	}
	if code := m.do("GET", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io/service-name%3Dkubernetes", "", nil, &slices); code != 200 {
		return "", "", fmt.Errorf("GET endpointslices through %s: %d", m.name, code)
	}
	var sliced []string
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			for _, a := range e.Addresses {
				for _, p := range s.Ports {
					sliced = append(sliced, fmt.Sprintf("%s:%d", a, p.Port))
				}
			}
		}
	}
	return strings.Join(addrs, ","), strings.Join(sliced, ","), nil
}

// waitForKubernetesEndpoints waits until the Endpoints and the
// EndpointSlice, read through m, list want, and returns how long it took.
func (m *haMember) waitForKubernetesEndpoints(t *testing.T, within time.Duration, what, want string) time.Duration {
	t.Helper()
	began := time.Now()
	testserver.EventuallyWithin(t, within, what, func() (bool, string) {
		ep, slice, err := m.kubernetesEndpoints()
		return err == nil && ep == want && slice == want, fmt.Sprintf("endpoints %q, slice %q, %v", ep, slice, err)
	})
	return time.Since(began)
}

// The default/kubernetes Endpoints and EndpointSlice list every live API
// server, kept by their leases in etcd (/registry/masterleases/<IP>, 15 s
// TTL, renewed every 10 s), as kube-apiserver's
// --endpoint-reconciler-type=lease: three servers, three addresses, each
// answering on the secure port; a server killed leaves once its lease
// lapses and the next reconcile notices (within 15 s + 10 s); a server
// restarted is back at once; one stopped cleanly leaves at once; kubectl
// through any server says the same.
func TestHAKubernetesEndpointsListEveryLiveAPIServer(t *testing.T) {
	t.Parallel()
	ms := startHACluster(t)
	port := ms[0].args[slices.Index(ms[0].args, "--secure-port")+1]
	addrs := func(members ...*haMember) string {
		var a []string
		for _, m := range members {
			a = append(a, m.ip+":"+port)
		}
		return strings.Join(a, ",")
	}
	all := addrs(ms...)
	took := ms[0].waitForKubernetesEndpoints(t, 30*time.Second, "the three API servers in the kubernetes endpoints", all)
	t.Logf("all three in the endpoints %v after the three were ready: %s", took.Round(time.Millisecond), all)
	for _, m := range ms[1:] {
		m.waitForKubernetesEndpoints(t, 5*time.Second, "the same endpoints through "+m.name, all)
	}
	// Each server answers on that port (on its loopback address).
	insecure := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for _, m := range ms {
		resp, err := insecure.Get("https://" + m.bind + ":" + port + "/readyz")
		if err != nil {
			t.Fatalf("%s's secure port %s:%s: %v", m.name, m.bind, port, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s's secure port %s:%s: /readyz %d", m.name, m.bind, port, resp.StatusCode)
		}
	}
	if etcdctl, err := filepath.Abs(filepath.Join("..", "bin", "etcdctl")); err == nil {
		if out, err := exec.Command(etcdctl, "--endpoints", ms[0].etcdClientURL, "get", "--prefix", "--keys-only", "/registry/masterleases/").Output(); err == nil {
			t.Logf("etcdctl get --prefix --keys-only /registry/masterleases/:\n%s", out)
		}
	}

	// cp3 killed: its lease stays until its TTL lapses, 15 s after its
	// last renewal (more if cp3 led etcd: a new leader gives every lease
	// a full TTL again), and the next reconcile of cp1 or cp2, at most
	// 10 s later, drops it.
	killed := time.Now()
	ms[2].kill()
	ms[0].waitForKubernetesEndpoints(t, 45*time.Second, "cp3 out of the endpoints after its kill", addrs(ms[0], ms[1]))
	t.Logf("cp3 killed (SIGKILL): out of the endpoints %v after the kill (lease TTL 15 s, reconcile every 10 s)", time.Since(killed).Round(time.Millisecond))

	// cp3 back: its first reconcile, at its start, puts it in.
	restarted := time.Now()
	ms[2].restart()
	ms[2].waitReady()
	ms[0].waitForKubernetesEndpoints(t, 30*time.Second, "cp3 back in the endpoints after its restart", all)
	t.Logf("cp3 restarted: back in the endpoints %v after its start", time.Since(restarted).Round(time.Millisecond))

	// cp2 stopped cleanly: it removes its lease and itself before it
	// exits, long before its lease could lapse.
	stopped := time.Now()
	ms[1].stop()
	exited := time.Since(stopped)
	left := addrs(ms[0], ms[2])
	ms[0].waitForKubernetesEndpoints(t, 5*time.Second, "cp2 out of the endpoints as it stops", left)
	t.Logf("cp2 stopped (SIGINT): exited after %v, out of the endpoints %v after the signal", exited.Round(time.Millisecond), time.Since(stopped).Round(time.Millisecond))
	log, _ := os.ReadFile(ms[1].logs["apiserver"])
	if !slices.ContainsFunc(strings.Split(string(log), "\n"), func(line string) bool {
		return strings.Contains(line, `msg="removed an API server from the kubernetes endpoints"`) && strings.Contains(line, "apiserver=198.51.100.2 ")
	}) {
		t.Errorf("cp2's log does not say it removed itself:\n%s", log)
	}

	// kubectl get endpoints kubernetes, through either server left: the
	// same two.
	for _, m := range []*haMember{ms[0], ms[2]} {
		k := newKubectl(t, m.cluster)
		out := k.mustKubectl(t, "get", "endpoints", "kubernetes")
		if got := parseTable(t, out).row(t, "NAME", "kubernetes")["ENDPOINTS"]; got != left {
			t.Errorf("kubectl get endpoints kubernetes through %s: %q, want %q\n%s", m.name, got, left, out)
		} else {
			t.Logf("kubectl --server %s get endpoints kubernetes:\n%s", m.URL, out)
		}
	}
}
