package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// helmRunner runs a real helm against one cluster: bin/helm (Helm 4) or
// bin/helm3 (Helm 3), which `make tools` builds, with a kubeconfig naming
// the cluster and config, cache and data directories of its own (the
// repositories it added, their indexes), so that nothing of the machine's
// plays a part.
type helmRunner struct {
	name string // helm or helm3
	bin  string
	env  []string
	dir  string // where values files and charts are written
}

// findHelm returns bin/NAME of the repository, or skips the test: helm is
// built by `make tools`, which `make test` runs first.
func findHelm(t *testing.T, name string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("..", "bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Skipf("bin/%s is not built: `make tools` builds it (Helm 4 as bin/helm, Helm 3 as bin/helm3)", name)
	}
	return abs
}

func newHelm(t *testing.T, c *cluster, name string) *helmRunner {
	t.Helper()
	home := t.TempDir()
	kubeconfig := writeLearnerKubeconfig(t, home, c.URL)
	env := append(os.Environ(), "HOME="+home, "KUBECONFIG="+kubeconfig,
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"), "HELM_NAMESPACE=")
	return &helmRunner{name: name, bin: findHelm(t, name), env: env, dir: t.TempDir()}
}

// run runs helm with args and returns its stdout, stderr and exit code.
// --wait and --timeout bound their own waits; this bound is for a hung
// helm.
func (h *helmRunner) run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.bin, args...)
	cmd.Env = h.env
	return runCommand(t, cmd)
}

// must runs helm and fails the test unless it exits 0; it returns stdout.
func (h *helmRunner) must(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := h.run(t, args...)
	if code != 0 {
		t.Fatalf("%s %s: exit %d\nstdout:\n%s\nstderr:\n%s", h.name, strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// file writes a file under the runner's directory and returns its path.
func (h *helmRunner) file(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(h.dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// startChartRepo runs `mkube serve-charts` beside the cluster, on a free
// port, and returns the repository's URL once it serves its index.
func startChartRepo(t *testing.T, c *cluster) string {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	c.startAs("charts", "mkube", "serve-charts", "--listen", addr)
	url := "http://" + addr
	testserver.EventuallyWithin(t, 30*time.Second, "mkube serve-charts serves index.yaml", func() (bool, string) {
		resp, err := http.Get(url + "/index.yaml")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == 200, resp.Status
	})
	return url
}

// wantLines fails the test unless out has each of the lines given, each
// compared with runs of spaces as one (helm's tables pad columns).
func wantLines(t *testing.T, what, out string, want ...string) {
	t.Helper()
	have := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		have[strings.Join(strings.Fields(l), " ")] = true
	}
	for _, w := range want {
		if !have[strings.Join(strings.Fields(w), " ")] {
			t.Errorf("%s: no line %q in\n%s", what, w, out)
		}
	}
}

// writeLearnerKubeconfig writes dir/kubeconfig naming the cluster's
// learner's port with no credentials, as a learner's kubeconfig does, for
// the clients that read only a kubeconfig (helm, the docs' shell).
func writeLearnerKubeconfig(t *testing.T, dir, server string) string {
	t.Helper()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: mkube
  cluster: {server: %q}
contexts:
- name: mkube
  context: {cluster: mkube, user: learner, namespace: default}
current-context: mkube
users:
- name: learner
  user: {}
`, server)
	if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}
