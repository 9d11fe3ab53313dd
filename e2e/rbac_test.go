package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/apiserver/pki"
	"github.com/mkube/mkube/internal/testserver"
)

// Seed 003 §十二 on the secure port, with the real kubectl: the user jane,
// whose certificate the cluster's CA signed, may do nothing but ask about
// herself until a RoleBinding gives her pod-reader; anonymous users may
// check the server's health and nothing else; and a user may not grant
// what it does not hold.
func TestRBACDecidesWhatEachUserMay(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH")
	}
	certDir := filepath.Join(t.TempDir(), "pki")
	c := &cluster{t: t, URL: fmt.Sprintf("http://127.0.0.1:%d", freePort(t)), logs: map[string]string{}}
	secure := c.startAPIServer(filepath.Join(t.TempDir(), "etcd"), "--cert-dir", certDir)
	c.waitReady()
	// The controller manager's clusterrole-aggregation controller fills
	// admin, edit and view, as in Kubernetes.
	c.start("controller-manager", "--server", c.URL)
	t.Cleanup(func() {
		if t.Failed() {
			c.dumpLogs()
		}
	})
	server := fmt.Sprintf("https://127.0.0.1:%d", secure)
	p, err := pki.Ensure(certDir, []string{"127.0.0.1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	jane := pki.Identity{Name: "jane", User: "jane"}
	if err := p.EnsureClient(jane, time.Now()); err != nil {
		t.Fatal(err)
	}
	janeConfig, err := p.WriteKubeconfig(jane, server)
	if err != nil {
		t.Fatal(err)
	}
	admin := &kubeconfigRunner{kubeconfig: filepath.Join(certDir, "admin.kubeconfig"), cacheDir: t.TempDir(), dir: t.TempDir()}
	asJane := &kubeconfigRunner{kubeconfig: janeConfig, cacheDir: t.TempDir()}

	// Before any binding: 403, in kube-apiserver's words.
	const forbidden = `Error from server (Forbidden): pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default"`
	if _, errOut, code := asJane.run(t, "get", "pods"); code == 0 || strings.TrimSpace(errOut) != forbidden {
		t.Fatalf("jane: kubectl get pods before any binding: exit %d, %q\nwant %s", code, errOut, forbidden)
	}
	if out, _, _ := asJane.run(t, "auth", "can-i", "list", "pods"); out != "no\n" {
		t.Errorf("jane: kubectl auth can-i list pods: %q, want no", out)
	}
	if out, _, code := asJane.run(t, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"); code != 0 || out != "jane" {
		t.Errorf("jane: kubectl auth whoami: %q (exit %d): system:basic-user lets everyone ask who they are", out, code)
	}

	// Seed 003 §十二.2.3: the Role pod-reader and jane's RoleBinding.
	admin.must(t, "apply", "-f", exampleFile("003-14-rolebinding-read-pods.yaml"))
	testserver.EventuallyWithin(t, 10*time.Second, "jane may list pods once bound", func() (bool, string) {
		out, errOut, code := asJane.run(t, "get", "pods")
		return code == 0, out + errOut
	})
	for _, tc := range []struct {
		runner *kubeconfigRunner
		args   []string
		want   string
	}{
		{asJane, []string{"auth", "can-i", "list", "pods"}, "yes"},
		{asJane, []string{"auth", "can-i", "delete", "pods"}, "no"},
		{asJane, []string{"auth", "can-i", "list", "pods", "-n", "kube-system"}, "no"},
		// The admin, a master, may impersonate: --as asks as jane.
		{admin, []string{"auth", "can-i", "watch", "pods", "--as", "jane"}, "yes"},
		{admin, []string{"auth", "can-i", "create", "pods", "--as", "jane"}, "no"},
	} {
		if out, errOut, _ := tc.runner.run(t, tc.args...); out != tc.want+"\n" {
			t.Errorf("kubectl %s: %q %s, want %s", strings.Join(tc.args, " "), out, errOut, tc.want)
		}
	}
	if out := admin.must(t, "get", "rolebinding", "read-pods", "-o", "wide"); !strings.Contains(out, "read-pods   Role/pod-reader") || !strings.Contains(out, "jane") {
		t.Errorf("kubectl get rolebinding read-pods -o wide:\n%s\nwant ROLE Role/pod-reader and USERS jane", out)
	}

	// The seed's own RoleBinding, roleRef's fields swapped, is refused.
	swapped := admin.manifest(t, "swapped.yaml", `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  namespace: default
  name: read-pods-seed
subjects:
  - kind: User
    name: jane
    apiGroup: rbac.authorization.k8s.io
roleRef:
  apiGroup: Role
  kind: pod-reader
  name: rbac.authorization.k8s.io
`)
	_, errOut, code := admin.run(t, "apply", "-f", swapped)
	for _, want := range []string{
		`roleRef.apiGroup: Unsupported value: "Role": supported values: "rbac.authorization.k8s.io"`,
		`roleRef.kind: Unsupported value: "pod-reader": supported values: "Role", "ClusterRole"`,
	} {
		if code == 0 || !strings.Contains(errOut, want) {
			t.Errorf("kubectl apply of the seed's RoleBinding: exit %d, %s\nwant %s", code, errOut, want)
		}
	}

	// A namespace's admin may grant in it only what it holds.
	admin.must(t, "create", "namespace", "dev")
	admin.must(t, "create", "rolebinding", "jane-admin", "--clusterrole=admin", "--user=jane", "-n", "dev")
	testserver.EventuallyWithin(t, 10*time.Second, "jane is dev's admin", func() (bool, string) {
		out, errOut, _ := asJane.run(t, "auth", "can-i", "create", "roles", "-n", "dev")
		return out == "yes\n", out + errOut
	})
	asJane.must(t, "create", "role", "pod-deleter", "--verb=delete", "--resource=pods", "-n", "dev")
	_, errOut, code = asJane.run(t, "create", "role", "node-reader", "--verb=get", "--resource=nodes", "-n", "dev")
	if want := `is attempting to grant RBAC permissions not currently held:` + "\n" + `{APIGroups:[""], Resources:["nodes"], Verbs:["get"]}`; code == 0 || !strings.Contains(errOut, want) {
		t.Errorf("jane: kubectl create role node-reader: exit %d, %s\nwant %s", code, errOut, want)
	}

	// Anonymous: the health and version are public, nothing else.
	for _, tc := range []struct {
		path string
		code int
		body string
	}{
		{"/healthz", http.StatusOK, "ok"},
		{"/version", http.StatusOK, `"gitVersion"`},
		{"/api/v1/pods", http.StatusForbidden, `pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API group \"\" at the cluster scope`},
		{"/api", http.StatusForbidden, `forbidden: User \"system:anonymous\" cannot get path \"/api\"`},
	} {
		code, body := anonymousGet(t, certDir, server+tc.path)
		if code != tc.code || !strings.Contains(body, tc.body) {
			t.Errorf("anonymous GET %s: %d %s, want %d %s", tc.path, code, body, tc.code, tc.body)
		}
	}
}

// kubeconfigRunner runs the real kubectl with a kubeconfig (the secure
// port, a user's certificate) rather than the plain port's --server.
type kubeconfigRunner struct {
	kubeconfig, cacheDir, dir string
}

func (k *kubeconfigRunner) run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", k.kubeconfig, "--cache-dir", k.cacheDir}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+k.cacheDir)
	return runCommand(t, cmd)
}

func (k *kubeconfigRunner) must(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := k.run(t, args...)
	if code != 0 {
		t.Fatalf("kubectl %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

func (k *kubeconfigRunner) manifest(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(k.dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// anonymousGet GETs url over TLS, trusting the cluster's CA, with no
// client certificate: curl --cacert ca.crt.
func anonymousGet(t *testing.T, certDir, url string) (int, string) {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(certDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
