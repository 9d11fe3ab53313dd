// Package audit writes kube-apiserver's audit log (--audit-log-path): one
// audit.k8s.io/v1 Event per request, as a JSON line, at level Metadata:
// who (user, groups, the user impersonated), did what (verb, objectRef,
// requestURI), from where (sourceIPs, userAgent), with what answer
// (responseStatus) and why (the authorizer's decision and reason in the
// annotations). A learner can read in it which component did each of
// seed 000's 13 steps:
//
//	{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata",
//	 "auditID":"…","stage":"ResponseComplete",
//	 "requestURI":"/api/v1/namespaces/default/pods/web/binding",
//	 "verb":"create","user":{"username":"system:kube-scheduler",
//	 "groups":["system:authenticated"]},"sourceIPs":["127.0.0.1"],
//	 "objectRef":{"resource":"pods","namespace":"default","name":"web",
//	 "apiVersion":"v1","subresource":"binding"},
//	 "responseStatus":{"metadata":{},"code":201},…}
//
// A request is logged once it is answered (stage ResponseComplete); a
// long-running one (a watch, exec, logs, a proxy) also when its answer
// starts (ResponseStarted), as kube-apiserver does. The request only
// fills in its event and hands it to a channel; one goroutine encodes and
// writes, so the log costs a request little.
//
// Where things live:
//
//	file       what it holds
//	logger.go  the Logger: Open or New, the channel of events and the one goroutine that writes them
//	filter.go  Handler, the filter that starts each request's event and completes it with the answer
//	record.go  the event of the request being served, in its context, and the setters the other filters call (SetUser, ...)
package audit

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/utils/clock"
)

// bufferSize is how many events may wait for the writer: a few seconds of
// a busy cluster's requests. A request finding it full waits for room, as
// kube-apiserver's blocking log backend does, so no event is lost.
const bufferSize = 8192

// Logger is an audit log being written.
type Logger struct {
	clock clock.PassiveClock
	log   *slog.Logger

	// mu guards closed: Close takes it to close eventsc, each sender holds
	// it (shared) while it sends, so nobody sends on a closed channel.
	mu     sync.RWMutex
	closed bool
	// eventsc carries finished events from the requests (senders) to the
	// writer goroutine; Close closes it.
	eventsc chan *event
	// donec is closed by the writer once it has written and flushed
	// everything and closed the file.
	donec chan struct{}
}

// event is an Event on its way to the log, with the start of its error
// response, which the writer decodes into responseStatus.
type event struct {
	auditv1.Event
	code      int32
	errorBody []byte
}

// Open starts writing the audit log to path, appending; "-" is standard
// output, as kube-apiserver's --audit-log-path.
func Open(path string, clk clock.PassiveClock, log *slog.Logger) (*Logger, error) {
	if path == "-" {
		return New(nopCloser{os.Stdout}, clk, log), nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return New(f, clk, log), nil
}

// New starts writing the audit log to w, which Close closes; nil clk is
// the real clock.
func New(w io.WriteCloser, clk clock.PassiveClock, log *slog.Logger) *Logger {
	if clk == nil {
		clk = clock.RealClock{}
	}
	if log == nil {
		log = slog.Default()
	}
	l := &Logger{clock: clk, log: log, eventsc: make(chan *event, bufferSize), donec: make(chan struct{})}
	go l.write(w) // owner: the Logger; returns when Close closes eventsc
	return l
}

// Close writes what is still buffered and closes the log. Events that
// finish after it are dropped.
func (l *Logger) Close() {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.eventsc)
	}
	l.mu.Unlock()
	<-l.donec
}

// send hands a finished event to the writer.
func (l *Logger) send(ev *event) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if !l.closed {
		l.eventsc <- ev
	}
}

// write encodes each event as a line, flushing whenever no more are
// waiting, so that `tail -f` sees a request as soon as it is answered.
func (l *Logger) write(w io.WriteCloser) {
	defer close(l.donec)
	defer w.Close()
	buf := bufio.NewWriterSize(w, 64<<10)
	for ev := range l.eventsc {
		ev.ResponseStatus = responseStatus(ev.code, ev.errorBody)
		ev.TypeMeta = metav1.TypeMeta{Kind: "Event", APIVersion: auditv1.SchemeGroupVersion.String()}
		data, err := json.Marshal(&ev.Event)
		if err == nil {
			buf.Write(append(data, '\n'))
		}
		if len(l.eventsc) == 0 {
			if err := buf.Flush(); err != nil {
				l.log.Warn("audit log not written", "err", err)
			}
		}
	}
	buf.Flush()
}

// responseStatus is the event's responseStatus: the code and, for an
// error, the Status' status, message, reason and details, the bounded
// fields kube-apiserver copies at level Metadata.
func responseStatus(code int32, errorBody []byte) *metav1.Status {
	st := &metav1.Status{Code: code}
	var answer metav1.Status
	if len(errorBody) > 0 && json.Unmarshal(errorBody, &answer) == nil && answer.Kind == "Status" {
		st.Status, st.Message, st.Reason, st.Details = answer.Status, answer.Message, answer.Reason, answer.Details
	}
	return st
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
