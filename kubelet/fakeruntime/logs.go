package fakeruntime

import "time"

// A container's log is what it printed on stdout, one line at a time, as
// a runtime keeps it in /var/log/pods. Fake containers print what a
// learner would want to know about them (the kubelet writes it for them):
// their image, command, environment and mounts, and their lifecycle.

// LogLine is one line a container printed, with the time it did.
type LogLine struct {
	Time time.Time
	Text string
}

// containerLog is one container instance's log.
type containerLog struct {
	lines []LogLine
	// changed is closed (and replaced) when a line is added or the log
	// closes: a broadcast to followers. Writers hold the runtime's lock.
	changed chan struct{}
	closed  bool // the container exited: nothing more will come
}

// WriteLog appends a line to the log of container id.
func (r *Runtime) WriteLog(id, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.logOf(id)
	if l.closed {
		return
	}
	l.lines = append(l.lines, LogLine{Time: r.clock.Now(), Text: text})
	close(l.changed)
	l.changed = make(chan struct{})
}

// closeLog ends the log of an exited container. Callers hold r.mu.
func (r *Runtime) closeLog(id string) {
	l := r.logOf(id)
	if !l.closed {
		l.closed = true
		close(l.changed)
	}
}

func (r *Runtime) logOf(id string) *containerLog {
	l, ok := r.logs[id]
	if !ok {
		l = &containerLog{changed: make(chan struct{})}
		r.logs[id] = l
	}
	return l
}

// ReadLog returns the lines of container id from index from on, the index
// to read from next time, a channel closed when more may be available,
// and whether the log has ended.
func (r *Runtime) ReadLog(id string, from int) (lines []LogLine, next int, wait <-chan struct{}, ended bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.logOf(id)
	if from < len(l.lines) {
		lines = append(lines, l.lines[from:]...)
	}
	return lines, len(l.lines), l.changed, l.closed
}
