package audit

import (
	"bufio"
	"net"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/uuid"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// Request is what the API server read off a request, for its event.
type Request struct {
	Verb string
	// ObjectRef is the object or collection a resource request names;
	// nil for /healthz, /api and other paths.
	ObjectRef *auditv1.ObjectReference
	// LongRunning requests (watch, exec, logs, proxy) are also logged
	// when their answer starts.
	LongRunning bool
}

// maxErrorBody bounds how much of an error response is kept for its
// responseStatus: a Status is small; a proxied error page may not be.
const maxErrorBody = 16 << 10

// Handler logs every request next serves. describe reads the request as
// the API server understands it. It goes first in the filter chain, so
// that requests authentication refuses (401) are logged too.
func (l *Logger) Handler(next http.Handler, describe func(*http.Request) Request) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := describe(r)
		id := types.UID(r.Header.Get(auditv1.HeaderAuditID))
		if id == "" {
			id = uuid.NewUUID()
		}
		w.Header().Set(auditv1.HeaderAuditID, string(id))
		rec := &record{ev: event{Event: auditv1.Event{Level: auditv1.LevelMetadata, AuditID: id,
			RequestURI: r.URL.RequestURI(), Verb: d.Verb, UserAgent: r.UserAgent(), ObjectRef: d.ObjectRef,
			SourceIPs: sourceIPs(r), RequestReceivedTimestamp: metav1.NewMicroTime(l.clock.Now())}}}
		aw := &responseWriter{ResponseWriter: w, code: http.StatusOK}
		if d.LongRunning {
			aw.started = func() { l.send(rec.snapshot(auditv1.StageResponseStarted, aw.fill(l))) }
		}
		next.ServeHTTP(aw, r.WithContext(withRecord(r.Context(), rec)))
		l.send(rec.snapshot(auditv1.StageResponseComplete, aw.fill(l)))
	})
}

func sourceIPs(r *http.Request) []string {
	ips := utilnet.SourceIPs(r)
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = ip.String()
	}
	return out
}

// responseWriter notes the answer's code and the start of an error's
// body, and passes on flushes (watch streams) and hijacks (exec, attach,
// port-forward upgrades).
type responseWriter struct {
	http.ResponseWriter
	code        int
	wroteHeader bool
	errorBody   []byte
	started     func() // for a long-running request: log ResponseStarted
}

// fill copies the answer so far into the event.
func (w *responseWriter) fill(l *Logger) func(ev *event) {
	return func(ev *event) {
		ev.code = int32(w.code)
		ev.errorBody = w.errorBody
		ev.StageTimestamp = metav1.NewMicroTime(l.clock.Now())
	}
}

func (w *responseWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.code, w.wroteHeader = code, true
		if w.started != nil {
			w.started()
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.code >= 400 && len(w.errorBody) < maxErrorBody {
		w.errorBody = append(w.errorBody, b[:min(len(b), maxErrorBody-len(w.errorBody))]...)
	}
	return w.ResponseWriter.Write(b)
}

func (w *responseWriter) Flush() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack hands the connection to an upgrade: 101 Switching Protocols.
func (w *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil && !w.wroteHeader {
		w.code, w.wroteHeader = http.StatusSwitchingProtocols, true
		if w.started != nil {
			w.started()
		}
	}
	return conn, rw, err
}

// Unwrap is for http.ResponseController.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
