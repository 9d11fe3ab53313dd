package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeChartsServesTheIndex runs `mkube serve-charts --listen
// 127.0.0.1:0`, reads the address it prints, fetches index.yaml and the
// mysql chart, then stops it as Ctrl-C would.
func TestServeChartsServesTheIndex(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, w := io.Pipe()
	done := make(chan int, 1)
	var stderr bytes.Buffer
	go func() {
		done <- runServeCharts(ctx, []string{"--listen", "127.0.0.1:0"}, w, &stderr)
		w.Close()
	}()
	lines := bufio.NewScanner(r)
	if !lines.Scan() {
		t.Fatalf("serve-charts printed nothing; stderr: %s", stderr.String())
	}
	first := lines.Text()
	if !strings.HasPrefix(first, "Serving guestbook-1.0.0, mysql-1.0.0, nginx-1.0.0 as a chart repository at http://") {
		t.Fatalf("first line %q", first)
	}
	url := first[strings.LastIndex(first, " ")+1:]
	go io.Copy(io.Discard, r) // the request log
	for path, want := range map[string]string{"/index.yaml": "apiVersion: v1", "/mysql-1.0.0.tgz": "\x1f\x8b"} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.HasPrefix(body, []byte(want)) {
			t.Errorf("GET %s: %d, body starting %q", path, resp.StatusCode, body[:min(len(body), 20)])
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d after the stop, want 0; stderr: %s", code, stderr.String())
	}
}

func TestServeChartsRefusesADirectoryWithoutCharts(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "notachart"), 0o755); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := runServeCharts(context.Background(), []string{"--dir", dir, "--listen", "127.0.0.1:0"}, &stdout, &stderr); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "no chart") {
		t.Errorf("stderr %q", stderr.String())
	}
}
