package cri

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// A container's log is a file the runtime writes and the kubelet reads
// (for `kubectl logs`) and rotates. The kubelet chooses where: the
// sandbox's log_directory (/var/log/pods/<namespace>_<pod>_<uid>) joined
// with the container's log_path (<container>/<attempt>.log), so each
// restart gets its own file. Each line is in the CRI logging format,
//
//	2026-08-03T10:15:42.123456789Z stdout F Hello, Kubernetes!
//
// the time the line was written, the stream (stdout or stderr), and F
// for a full line (P would mark a partial one, continued on the next
// line; this runtime always writes whole lines).

// logPath is where a container's log file goes, or "" when the kubelet
// (or crictl) gave no log directory or path: then, as in containerd, the
// container keeps no log.
func logPath(logDirectory, containerLogPath string) string {
	if logDirectory == "" || containerLogPath == "" {
		return ""
	}
	return filepath.Join(logDirectory, containerLogPath)
}

// logWriter is a running container's log file. Its two streams share
// it, each line stamped with the clock when it is written; a line not
// yet ended waits for its end (or the exit).
//
// The file is open only while the container writes: it is closed a
// second after it was opened and opened again by the next write. A node
// runs thousands of containers that print a few lines and then nothing
// (pause, nginx), and a process may hold only so many open files.
type logWriter struct {
	mu      sync.Mutex
	path    string   // "" keeps no log
	f       *os.File // open while writing; nil between bursts
	done    bool     // the process exited: later writes are lost
	clock   clock.Clock
	pending map[string][]byte // by stream: the start of a line not ended yet
}

// logIdleClose is how long a log file stays open after it was opened.
const logIdleClose = time.Second

// openLog makes sure the log file at path (and its directory) can be
// created, as containerd does before it starts the process. A path of ""
// keeps no log.
func openLog(path string, clk clock.Clock) (*logWriter, error) {
	w := &logWriter{path: path, clock: clk, pending: map[string][]byte{}}
	if path == "" {
		return w, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("open container log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open container log: %w", err)
	}
	f.Close()
	return w, nil
}

// file is the open log file, opened if need be, with its close a second
// later. Callers hold w.mu.
func (w *logWriter) file() *os.File {
	if w.f == nil && w.path != "" && !w.done {
		f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
		if err != nil {
			return nil // lost, as below
		}
		w.f = f
		go func() {
			<-w.clock.After(logIdleClose)
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.f == f {
				f.Close()
				w.f = nil
			}
		}()
	}
	return w.f
}

// stream is what the process writes to as its stdout or stderr.
func (w *logWriter) stream(name string) io.Writer {
	return writerFunc(func(b []byte) (int, error) { return w.write(name, b) })
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

func (w *logWriter) write(stream string, b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f := w.file()
	if f == nil {
		return len(b), nil // a process never fails to write: the log is lost
	}
	now := w.clock.Now().Format(time.RFC3339Nano)
	var out bytes.Buffer
	data := append(w.pending[stream], b...)
	for {
		line, rest, ok := bytes.Cut(data, []byte("\n"))
		if !ok {
			break
		}
		fmt.Fprintf(&out, "%s %s F %s\n", now, stream, line)
		data = rest
	}
	w.pending[stream] = data
	// A full disk loses log lines; the process goes on, as with a real
	// runtime's log driver.
	f.Write(out.Bytes())
	return len(b), nil
}

// close writes what is left of unended lines and closes the file; the
// process has exited. As containerd does, a last line the process did
// not end (`echo -n DONE`) is written as a partial one, P: the kubelet
// then shows it without a newline it never printed.
func (w *logWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	var rest bytes.Buffer
	now := w.clock.Now().Format(time.RFC3339Nano)
	for _, stream := range []string{"stdout", "stderr"} {
		if line := w.pending[stream]; len(line) > 0 {
			fmt.Fprintf(&rest, "%s %s P %s\n", now, stream, line)
		}
	}
	if rest.Len() > 0 {
		if f := w.file(); f != nil {
			f.Write(rest.Bytes())
		}
	}
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
	w.done = true
}
