package cri

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// Listen opens the unix socket of endpoint, "unix:///var/run/mkube/runtime.sock"
// (the form of the kubelet's --container-runtime-endpoint), creating its
// directory if need be.
//
// A socket file left behind by a runtime that died is removed, as
// containerd does; but if a process still answers on it, Listen fails
// rather than steal the socket from under it. Closing the listener
// removes the socket file.
func Listen(endpoint string) (net.Listener, error) {
	path, ok := strings.CutPrefix(endpoint, "unix://")
	if !ok || path == "" {
		return nil, fmt.Errorf("endpoint %q: want unix:///path/to/socket", endpoint)
	}
	if err := removeStaleSocket(path); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("listen on %s: %w", endpoint, err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", endpoint, err)
	}
	return l, nil
}

// removeStaleSocket removes the socket at path if nobody listens on it.
// It refuses to remove anything that is not a socket.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check socket %s: %w", path, err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("%s exists and is not a socket", path)
	}
	if conn, err := net.Dial("unix", path); err == nil {
		conn.Close()
		return fmt.Errorf("%s is in use: another process is listening on it", path)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove stale socket %s: %w", path, err)
	}
	return nil
}
