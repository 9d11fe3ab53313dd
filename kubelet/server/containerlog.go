package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	kubecontainer "github.com/mkube/mkube/kubelet/container"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// `kubectl logs` reads the container's CRI log file, which the runtime
// writes and the kubelet only reads (pkg/kubelet/kuberuntime/logs): each
// line is
//
//	<RFC3339Nano time> <stdout|stderr> <F|P> <text>
//
// where F ends a line and P marks a part continued on the next one.

// logPollInterval is how often a follower looks for new lines and
// whether the container still runs. The real kubelet waits on inotify and
// checks the container's state every 5 s; a quarter second keeps `kubectl
// logs -f` prompt without it.
const logPollInterval = 250 * time.Millisecond

// logOptions are the query's tailLines (-1: all), follow, timestamps,
// sinceSeconds or sinceTime (the zero time: all) and limitBytes (0: no
// limit).
type logOptions struct {
	tail       int
	follow     bool
	timestamps bool
	since      time.Time
	limitBytes int64
}

// errLogLimit ends a log once limitBytes have been written.
var errLogLimit = errors.New("the log's limitBytes were written")

// limitedWriter writes at most n bytes to w, then fails with errLogLimit.
type limitedWriter struct {
	w io.Writer
	n int64
}

func (l *limitedWriter) Write(b []byte) (int, error) {
	if int64(len(b)) > l.n {
		n, err := l.w.Write(b[:l.n])
		l.n -= int64(n)
		if err == nil {
			err = errLogLimit
		}
		return n, err
	}
	n, err := l.w.Write(b)
	l.n -= int64(n)
	return n, err
}

// writeContainerLog writes c's log to w, as opts ask. Following ends when
// the container is no longer running and its log is read to the end, or
// when ctx ends (the client went away).
func (s *Server) writeContainerLog(ctx context.Context, hw http.ResponseWriter, c *kubecontainer.Container, opts logOptions) error {
	err := s.copyContainerLog(ctx, hw, c, opts)
	if errors.Is(err, errLogLimit) {
		return nil // as much as was asked for
	}
	return err
}

// copyContainerLog is writeContainerLog until the limit is reached.
func (s *Server) copyContainerLog(ctx context.Context, hw http.ResponseWriter, c *kubecontainer.Container, opts logOptions) error {
	var w io.Writer = hw
	if opts.limitBytes > 0 {
		w = &limitedWriter{w: hw, n: opts.limitBytes}
	}
	f, err := os.Open(c.LogPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil // it printed nothing yet
	}
	if err != nil {
		return err
	}
	defer f.Close()
	rd := &logReader{r: bufio.NewReader(f), timestamps: opts.timestamps, since: opts.since}
	lines, err := rd.readAvailable()
	if err != nil {
		return err
	}
	if c.State == runtimeapi.ContainerState_CONTAINER_EXITED {
		lines = append(lines, rd.rest()...)
	}
	if opts.tail >= 0 && len(lines) > opts.tail {
		lines = lines[len(lines)-opts.tail:]
	}
	flusher, _ := hw.(http.Flusher)
	for {
		if _, err := io.WriteString(w, strings.Join(lines, "")); err != nil {
			return err // the client went away
		}
		if !opts.follow {
			return nil
		}
		if flusher != nil {
			flusher.Flush()
		}
		running, err := s.isRunning(ctx, c.RawID)
		if err != nil || !running {
			// Exited: one last read picks up what it printed last.
			lines, rerr := rd.readAvailable()
			lines = append(lines, rd.rest()...)
			if rerr == nil {
				_, rerr = io.WriteString(w, strings.Join(lines, ""))
			}
			return errors.Join(err, rerr)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.clock.After(logPollInterval):
		}
		if lines, err = rd.readAvailable(); err != nil {
			return err
		}
	}
}

// isRunning asks the runtime whether container id still runs.
func (s *Server) isRunning(ctx context.Context, id string) (bool, error) {
	resp, err := s.host.Runtime().ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		return false, fmt.Errorf("container status: %w", err)
	}
	return resp.GetStatus().GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING, nil
}

// logReader turns CRI log lines into what `kubectl logs` prints: the text,
// after the time if timestamps are asked for.
type logReader struct {
	r          *bufio.Reader
	timestamps bool
	pending    string // a line read up to the end of the file, not yet ended by '\n'
	partial    string // the P parts of a line so far
	// partialTime is when the first of them was written.
	partialTime string
	since       time.Time // lines written before it are left out (sinceSeconds, sinceTime)
}

// readAvailable returns the whole lines written so far, each ending in
// "\n".
func (l *logReader) readAvailable() ([]string, error) {
	var out []string
	for {
		s, err := l.r.ReadString('\n')
		l.pending += s
		if errors.Is(err, io.EOF) {
			return out, nil // the rest comes with the next write
		}
		if err != nil {
			return out, err
		}
		line := strings.TrimSuffix(l.pending, "\n")
		l.pending = ""
		if text, ok := l.parse(line); ok {
			out = append(out, text)
		}
	}
}

// rest is what a container that exited left unended: the P parts of
// its last line, which no F line will end (containerd writes a last line
// without its newline as P), as the kubelet prints them, without a
// newline.
func (l *logReader) rest() []string {
	if l.partial == "" {
		return nil
	}
	text := l.partial
	l.partial = ""
	if l.timestamps {
		text = l.partialTime + " " + text
	}
	return []string{text}
}

// parse reads one CRI log line; ok is false for a P part, which waits for
// the rest of its line, and for a line not in the format.
func (l *logReader) parse(line string) (string, bool) {
	f := strings.SplitN(line, " ", 4)
	if len(f) < 3 {
		return "", false
	}
	text := ""
	if len(f) == 4 {
		text = f[3]
	}
	if !l.since.IsZero() {
		if at, err := time.Parse(time.RFC3339Nano, f[0]); err == nil && at.Before(l.since) {
			return "", false // older than asked for
		}
	}
	if runtimeapi.LogTag(f[2]) == runtimeapi.LogTagPartial {
		if l.partial == "" {
			l.partialTime = f[0]
		}
		l.partial += text
		return "", false
	}
	text, l.partial = l.partial+text, ""
	if l.timestamps {
		return f[0] + " " + text + "\n", true
	}
	return text + "\n", true
}
