package e2e

import (
	"bufio"
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// timedLine is a line kubectl printed, and when the test read it.
type timedLine struct {
	at   time.Time
	text string
}

// kubectlWatch runs kubectl get --watch with args in the background until
// the test ends, and returns a function giving every line it printed so
// far with the time each came: kubectl get -w -o jsonpath prints the
// object as it is, then again on each change, so no value the object
// passes through goes unseen, however briefly it held.
func (k *kubectlRunner) kubectlWatch(t *testing.T, args ...string) func() []timedLine {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := k.command(ctx, append([]string{"get", "--watch"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		lines []timedLine
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for sc := bufio.NewScanner(stdout); sc.Scan(); {
			mu.Lock()
			lines = append(lines, timedLine{time.Now(), sc.Text()})
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		cmd.Wait()
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("kubectl get --watch %s: %s", strings.Join(args, " "), stderr.String())
		}
	})
	return func() []timedLine {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(lines)
	}
}

// changes is lines without the repeats: each value once, where it began
// (kubectl prints an object again for changes the jsonpath does not show).
func changes(lines []timedLine) []timedLine {
	var out []timedLine
	for _, l := range lines {
		if len(out) == 0 || out[len(out)-1].text != l.text {
			out = append(out, l)
		}
	}
	return out
}
