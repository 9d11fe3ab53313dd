package cri

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// socketDir is a short temporary directory: a unix socket's path must fit
// in 108 bytes, and t.TempDir() holds the (long) test name.
func socketDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cri")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestListen(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, path string) // prepares what is at path
		wantErr string                          // "" if Listen succeeds
	}{
		{"a missing socket and its directory are created", func(t *testing.T, path string) {}, ""},
		{"a stale socket left by a dead runtime is removed", func(t *testing.T, path string) {
			os.MkdirAll(filepath.Dir(path), 0o755)
			l, err := net.Listen("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			l.(*net.UnixListener).SetUnlinkOnClose(false)
			l.Close()
		}, ""},
		{"a socket another process listens on is refused", func(t *testing.T, path string) {
			os.MkdirAll(filepath.Dir(path), 0o755)
			l, err := net.Listen("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
		}, "another process is listening on it"},
		{"a file that is not a socket is left alone", func(t *testing.T, path string) {
			os.MkdirAll(filepath.Dir(path), 0o755)
			os.WriteFile(path, []byte("precious"), 0o644)
		}, "is not a socket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(socketDir(t), "run", "rt.sock")
			tt.setup(t, path)
			l, err := Listen("unix://" + path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Listen: %v, want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			l.Close()
		})
	}
}

func TestListenRefusesEndpointsThatAreNotUnixSockets(t *testing.T) {
	for _, endpoint := range []string{"/var/run/rt.sock", "tcp://127.0.0.1:1234", "unix://"} {
		if l, err := Listen(endpoint); err == nil {
			l.Close()
			t.Errorf("Listen(%q) succeeded, want an error", endpoint)
		} else if !strings.Contains(err.Error(), "want unix:///path/to/socket") {
			t.Errorf("Listen(%q): %v, want it to say what an endpoint looks like", endpoint, err)
		}
	}
}

func TestServeStopsWhenItsContextEndsAndRemovesTheSocket(t *testing.T) {
	path := filepath.Join(socketDir(t), "rt.sock")
	l, err := Listen("unix://" + path)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, l) }()
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v, want nil after a graceful stop", err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("socket after stop: %v, want it removed", err)
	}
}
