package cri

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A container's log is a file the runtime writes and the kubelet reads
// (for `kubectl logs`) and rotates. The kubelet chooses where: the
// sandbox's log_directory (/var/log/pods/<namespace>_<pod>_<uid>) joined
// with the container's log_path (<container>/<attempt>.log), so each
// restart gets its own file. Each line is in the CRI logging format,
//
//	2026-08-03T10:15:42.123456789Z stdout F started; running until stopped
//
// the time the line was written, the stream, and F for a full line (P
// would mark a partial one, continued on the next line). This runtime
// prints on stdout only and always whole lines.

// logPath is where a container's log file goes, or "" when the kubelet
// (or crictl) gave no log directory or path: then, as in containerd, the
// container keeps no log.
func logPath(logDirectory, containerLogPath string) string {
	if logDirectory == "" || containerLogPath == "" {
		return ""
	}
	return filepath.Join(logDirectory, containerLogPath)
}

// appendLog writes text to the log file at path, one CRI line per line of
// text, all stamped now. It creates the file and its directory if needed,
// as containerd does. A path of "" keeps no log.
func appendLog(path string, now time.Time, text string) error {
	if path == "" {
		return nil
	}
	var b bytes.Buffer
	for line := range strings.SplitSeq(text, "\n") {
		fmt.Fprintf(&b, "%s stdout F %s\n", now.Format(time.RFC3339Nano), line)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write container log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return fmt.Errorf("write container log: %w", err)
	}
	_, err = f.Write(b.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write container log %s: %w", path, err)
	}
	return nil
}
