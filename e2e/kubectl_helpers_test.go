package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kubectlRunner runs the real kubectl against one cluster, with a fresh
// cache directory (discovery and the version dispatcher's answer are cached
// per server) and no kubeconfig or home directory of the machine.
type kubectlRunner struct {
	server   string
	cacheDir string
	env      []string
	dir      string // where manifests are written
}

func newKubectl(t *testing.T, c *cluster) *kubectlRunner {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH")
	}
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "KUBECONFIG="+filepath.Join(home, "no-kubeconfig"))
	return &kubectlRunner{server: c.URL, cacheDir: t.TempDir(), env: env, dir: t.TempDir()}
}

func (k *kubectlRunner) command(ctx context.Context, args ...string) *exec.Cmd {
	full := append([]string{"--server", k.server, "--cache-dir", k.cacheDir}, args...)
	cmd := exec.CommandContext(ctx, "kubectl", full...)
	cmd.Env = k.env
	return cmd
}

// kubectl runs kubectl with args and returns its stdout, stderr and exit code.
func (k *kubectlRunner) kubectl(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	return runCommand(t, k.command(ctx, args...))
}

// runCommand runs a client (kubectl, crictl) and returns its stdout,
// stderr and exit code; a command that cannot start fails the test.
func runCommand(t *testing.T, cmd *exec.Cmd) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("%s: %v", strings.Join(cmd.Args, " "), err)
	}
	return o.String(), e.String(), code
}

// mustKubectl runs kubectl and fails the test unless it exits 0.
func (k *kubectlRunner) mustKubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := k.kubectl(t, args...)
	if code != 0 {
		t.Fatalf("kubectl %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// mustFail runs kubectl and fails the test if it exits 0; it returns stderr.
func (k *kubectlRunner) mustFail(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := k.kubectl(t, args...)
	if code == 0 {
		t.Fatalf("kubectl %s succeeded, expected an error\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), out, errOut)
	}
	return errOut
}

// manifest writes a file under the runner's directory and returns its path.
func (k *kubectlRunner) manifest(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(k.dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// kubeTable is kubectl's human output: a header and rows of cells by column.
type kubeTable struct {
	header []string
	rows   []map[string]string
}

// parseTable reads kubectl's tabwriter output. Columns are left-aligned, so
// each column spans from where its name starts in the header to where the
// next one starts; names are separated by at least two spaces ("NOMINATED
// NODE" is one column).
func parseTable(t *testing.T, out string) kubeTable {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) == "" {
		t.Fatalf("no table in output %q", out)
	}
	var tab kubeTable
	var starts []int
	h := lines[0]
	for i := 0; i < len(h); {
		if h[i] == ' ' {
			i++
			continue
		}
		start := i
		for i < len(h) && !(h[i] == ' ' && (i+1 >= len(h) || h[i+1] == ' ')) {
			i++
		}
		starts = append(starts, start)
		tab.header = append(tab.header, h[start:i])
	}
	for _, line := range lines[1:] {
		row := map[string]string{}
		for j, name := range tab.header {
			if starts[j] >= len(line) {
				row[name] = ""
				continue
			}
			end := len(line)
			if j+1 < len(starts) && starts[j+1] < end {
				end = starts[j+1]
			}
			row[name] = strings.TrimSpace(line[starts[j]:end])
		}
		tab.rows = append(tab.rows, row)
	}
	return tab
}

func (tab kubeTable) column(name string) []string {
	var out []string
	for _, r := range tab.rows {
		out = append(out, r[name])
	}
	return out
}

func (tab kubeTable) row(t *testing.T, col, value string) map[string]string {
	t.Helper()
	for _, r := range tab.rows {
		if r[col] == value {
			return r
		}
	}
	t.Fatalf("no row with %s=%q in %v", col, value, tab.rows)
	return nil
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
		if m[s] < 0 {
			return false
		}
	}
	return true
}

// section returns the lines of describe output from the line starting with
// title up to the next line that starts a top-level field (no indentation).
func section(out, title string) []string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, title) {
			continue
		}
		var sec []string
		for _, m := range lines[i+1:] {
			if m != "" && m[0] != ' ' {
				break
			}
			sec = append(sec, m)
		}
		return sec
	}
	return nil
}
