package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDocs runs the checked transcripts of README.md and docs/*.md (the
// "console" blocks, docs/README.md says how they read) against a real
// cluster, one per file, so a doc that no longer says what mkube prints
// fails the tests.
func TestDocs(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH")
	}
	files, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"../README.md"}, files...)
	var checkedBlocks, checkedCommands, otherBlocks, otherCommands int
	for _, file := range files {
		blocks, err := readTranscripts(file)
		if err != nil {
			t.Fatal(err)
		}
		var checked []transcriptBlock
		for _, b := range blocks {
			if b.checked {
				checked = append(checked, b)
				checkedBlocks++
				checkedCommands += len(b.commands)
			} else {
				otherBlocks++
				otherCommands += len(b.commands)
			}
		}
		if len(checked) == 0 {
			continue
		}
		name := strings.TrimPrefix(file, "../")
		t.Run(name, func(t *testing.T) { runTranscripts(t, name, checked) })
	}
	t.Logf("checked: %d blocks, %d commands; not checked: %d blocks, %d commands",
		checkedBlocks, checkedCommands, otherBlocks, otherCommands)
}

// runTranscripts runs one file's blocks in order on a fresh cluster, as a
// reader would type them from the top of the file, and stops at the first
// command whose output differs from the doc's, since the next ones build
// on it.
func runTranscripts(t *testing.T, file string, blocks []transcriptBlock) {
	if usesHelm(blocks) {
		findHelm(t, "helm") // skips the file when `make tools` has not built it
	}
	// The secure port on every interface, as in docker compose: the
	// kubernetes Service's endpoint is the host's address, which pods
	// reach kubernetes.default.svc at.
	c := startCluster(t, []string{"--bind-address", "0.0.0.0"}, "node01", "node02", "node03")
	sh := newDocShell(t, c)
	if usesHelm(blocks) {
		sh.addHelm(t, c)
	}
	sh.waitForNodes(t, 3)
	for _, b := range blocks {
		for _, cmd := range b.commands {
			if !sh.run(t, cmd) {
				t.Errorf("%s:%d: the output of\n  $ %s\ndoes not match the doc's", file, cmd.line, cmd.text)
				return
			}
		}
	}
}

// docShell runs the docs' commands as a reader types them: in bash, in a
// directory with the repository's examples/ and the built binaries as bin/,
// with kubectl's kubeconfig naming the cluster and `k` as kubectl.
type docShell struct {
	dir, url, secureURL string
	env                 []string
	// chartsURL is where `mkube serve-charts` serves, for the docs'
	// http://127.0.0.1:8879 (addHelm).
	chartsURL string
	// definitions are the doc's earlier alias, export and VAR=$(...)
	// lines, run again before each command, as a reader's shell keeps
	// them.
	definitions []string
}

// definition finds the commands whose effect is on the reader's shell.
var definition = regexp.MustCompile(`^(alias|export) |^[A-Za-z_]+=`)

func newDocShell(t *testing.T, c *cluster) *docShell {
	dir := t.TempDir()
	examples, err := filepath.Abs("../examples")
	if err != nil {
		t.Fatal(err)
	}
	// pki is the API server's, as `docker cp` copies it out in the docs.
	for link, target := range map[string]string{"examples": examples, "bin": binDir, "pki": c.certDir()} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	kubeconfig := writeLearnerKubeconfig(t, home, c.URL)
	env := append(os.Environ(), "HOME="+home, "KUBECONFIG="+kubeconfig, "MKUBE_SERVER="+c.URL,
		"PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return &docShell{dir: dir, url: c.URL, secureURL: fmt.Sprintf("https://127.0.0.1:%d", c.securePort), env: env}
}

// usesHelm says whether a file's transcripts run helm.
func usesHelm(blocks []transcriptBlock) bool {
	for _, b := range blocks {
		for _, cmd := range b.commands {
			if f := strings.Fields(cmd.text); len(f) > 0 && f[0] == "helm" {
				return true
			}
		}
	}
	return false
}

// addHelm puts bin/helm (Helm 4) on the shell's PATH and runs mkube's
// chart repository beside the cluster, as `make up` and `make local` do.
// helm keeps its repositories under the shell's HOME, a directory of the
// test's own.
func (s *docShell) addHelm(t *testing.T, c *cluster) {
	tools := t.TempDir()
	if err := os.Symlink(findHelm(t, "helm"), filepath.Join(tools, "helm")); err != nil {
		t.Fatal(err)
	}
	for i, e := range s.env {
		if strings.HasPrefix(e, "PATH=") {
			s.env[i] = "PATH=" + tools + string(os.PathListSeparator) + strings.TrimPrefix(e, "PATH=")
		}
	}
	s.chartsURL = startChartRepo(t, c)
}

// prelude makes `k` the alias the docs use for kubectl.
const prelude = "shopt -s expand_aliases\nk() { kubectl \"$@\"; }\n"

// exec runs one command line in bash and returns what it printed, stdout
// and stderr together, as a terminal shows them.
func (s *docShell) exec(t *testing.T, line string) (string, int) {
	t.Helper()
	// The docs name the learner's port of `make up`; the test's cluster
	// listens elsewhere.
	script := prelude + strings.Join(s.definitions, "\n") + "\n" + line
	script = strings.ReplaceAll(script, "http://127.0.0.1:8080", s.url)
	script = strings.ReplaceAll(script, "https://127.0.0.1:6443", s.secureURL)
	if s.chartsURL != "" {
		script = strings.ReplaceAll(script, "http://127.0.0.1:8879", s.chartsURL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir, cmd.Env = s.dir, s.env
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		if exit, ok := err.(*exec.ExitError); ok {
			code = exit.ExitCode()
		} else {
			t.Fatalf("$ %s: %v", line, err)
		}
	}
	return string(out), code
}

// run runs a command of a transcript and says whether its output matches.
// A command the doc shows no output for must succeed; a command that only
// reads is run again until its output matches (the cluster gets there)
// or a minute has passed.
func (s *docShell) run(t *testing.T, cmd transcriptCommand) bool {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		began := time.Now()
		out, code := s.exec(t, cmd.text)
		var ok bool
		if len(trimBlank(cmd.expected)) == 0 {
			ok = code == 0
		} else {
			ok = matchOutput(cmd.expected, out)
		}
		if ok {
			if definition.MatchString(cmd.text) {
				s.definitions = append(s.definitions, cmd.text)
			}
			return true
		}
		if !readOnly(cmd.text) || time.Now().After(deadline) {
			t.Logf("expected:\n%s\ngot (exit %d):\n%s", strings.Join(cmd.expected, "\n"), code, out)
			return false
		}
		// Polling a state, not waiting for time to pass: as long as a
		// run takes (kubectl's start), so waiting costs half a core.
		time.Sleep(max(100*time.Millisecond, time.Since(began)))
	}
}

// waitForNodes waits until the cluster's kubelets have registered and are
// Ready, as a reader starts once `kubectl get nodes` shows them.
func (s *docShell) waitForNodes(t *testing.T, n int) {
	t.Helper()
	want := make([]string, 0, n+1)
	want = append(want, "NAME STATUS ROLES AGE VERSION")
	for i := 1; i <= n; i++ {
		want = append(want, fmt.Sprintf("node%02d Ready <none> 1s v1.32.0-mkube", i))
	}
	if !s.run(t, transcriptCommand{text: "kubectl get nodes", expected: want}) {
		t.Fatal("the nodes did not become Ready")
	}
}

// TestDocsTranscriptFormat checks the reader of the transcripts and the
// matching of outputs, without a cluster.
func TestDocsTranscriptFormat(t *testing.T) {
	t.Parallel()
	doc := filepath.Join(t.TempDir(), "doc.md")
	os.WriteFile(doc, []byte("text\n\n```console\n$ k get pods \\\n    -o wide\nNAME READY\nweb-5d9f7dd658-x8wd2 1/1\n$ k apply -f x.yaml\n$ kubectl apply -f - <<EOF\nkind: Pod\n$ not a command\nEOF\npod/x created\n```\n\n```text\n$ docker compose up\n```\n\n```\nno commands\n```\n"), 0o644)
	blocks, err := readTranscripts(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 || !blocks[0].checked || blocks[1].checked {
		t.Fatalf("blocks: %+v", blocks)
	}
	if got := blocks[0].commands[0]; got.text != "k get pods  -o wide" || len(got.expected) != 2 || len(blocks[0].commands[1].expected) != 0 {
		t.Fatalf("first command: %+v", got)
	}
	if got := blocks[0].commands[2]; got.text != "kubectl apply -f - <<EOF\nkind: Pod\n$ not a command\nEOF" || len(got.expected) != 1 {
		t.Fatalf("first command: %+v", got)
	}
	for _, c := range []struct {
		expected []string
		output   string
		want     bool
	}{
		{[]string{"NAME        READY   AGE", "web-jf74v   1/1     2s"}, "NAME         READY   AGE\nweb-abc12    1/1     2m10s\n", false},
		{[]string{"NAME        READY   AGE", "web-jf74v   1/1     2s"}, "NAME         READY   AGE\nweb-xk9q2    1/1     2m10s\n", true},
		{[]string{"web-69fbffd9f7-dvf6s 10.244.1.2 3 (2s ago)"}, "web-5d9f7dd658-x8wd2 10.244.3.7 4 (41s ago)", true},
		{[]string{"a", "...", "d"}, "a\nb\nc\nd\n", true},
		{[]string{"a", "...", "d"}, "a\nb\nc\n", false},
		{[]string{"uid=… ok"}, "uid=3b167616-0cf1-4974-8b31-87fb5704f50d ok", true},
		{[]string{"Restart Count:  3"}, "Restart Count:  4", false},
		{[]string{"NAME NODE", "a-xk9q2 node01", "b node02"}, "NAME NODE\nb node02\na-b7c5d node01", true},
		{[]string{"NAME NODE", "a node01", "b node02"}, "NAME NODE\na node02\nb node01", false},
	} {
		if got := matchOutput(c.expected, c.output); got != c.want {
			t.Errorf("matchOutput(%q, %q) = %v, want %v", c.expected, c.output, got, c.want)
		}
	}
}
