package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// startDashboard starts bin/dashboard on a free port against c with
// flags (--server or --kubeconfig), and waits for its informers to sync.
func startDashboard(t testing.TB, c *cluster, flags ...string) string {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	c.start("dashboard", append([]string{"--listen", addr}, flags...)...)
	url := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("dashboard at %s not ready in 60s: %v", url, err)
		}
		time.Sleep(100 * time.Millisecond) // polling a process's readiness, with a deadline
	}
}

// browser is a headless Debian chromium driven over the DevTools protocol
// by chromedp, and the JavaScript errors its pages reported.
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
}

// newBrowser starts chromium, or skips the test where it is not installed
// (.ci/run installs Debian's chromium).
func newBrowser(t *testing.T) *browser {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.WindowSize(1400, 1100), chromedp.Flag("disable-gpu", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &browser{}
	// Every uncaught exception, console.error and error of the browser's
	// log (a failed load included) is a JavaScript error of the page.
	listen := func(ev any) {
		var msg string
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			msg = "exception: " + e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				msg = "console.error"
				for _, a := range e.Args {
					msg += " " + string(a.Value) + a.Description
				}
			}
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				msg = "log: " + e.Entry.Text + " " + e.Entry.URL
			}
		}
		if msg != "" {
			b.mu.Lock()
			b.errors = append(b.errors, msg)
			b.mu.Unlock()
		}
	}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(listen))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b.ctx = ctx
	// The first run starts the browser, and must have no deadline: the
	// browser lives as long as its context.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return b
}

// do runs chromedp actions with a deadline.
func (b *browser) do(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// evalJS evaluates js on b's page.
func evalJS[T any](t *testing.T, b *browser, js string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// waitTrue evaluates js until it is true, or fails with what after 90s.
func (b *browser) waitTrue(t *testing.T, what, js string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !evalJS[bool](t, b, js) {
		if time.Now().After(deadline) {
			t.Fatalf("the page never showed %s; it shows:\n%s", what, evalJS[string](t, b, `document.querySelector("main").innerText`))
		}
		time.Sleep(200 * time.Millisecond) // polling the page, with a deadline
	}
}

// consoleErrors are the JavaScript errors so far.
func (b *browser) consoleErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// screenshot saves the element sel as docs/images/name when
// MKUBE_SCREENSHOTS=1 (as golden files are updated on request), and into
// the test's temporary directory otherwise, so that a test run does not
// change the repository.
func (b *browser) screenshot(t *testing.T, sel, name string) {
	t.Helper()
	b.do(t, chromedp.ScrollIntoView(chromedp.CSS(sel)))
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("screenshot %s: %v", sel, err)
	}
	dir := t.TempDir()
	if os.Getenv("MKUBE_SCREENSHOTS") == "1" {
		dir = filepath.Join("..", "docs", "images")
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s: %d bytes", filepath.Join(dir, name), len(png))
}
