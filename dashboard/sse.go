package dashboard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// heartbeat is how often an idle stream sends a comment line: often
// enough that no proxy or browser closes it as dead (many cut idle
// connections at 30-60s), rarely enough to cost nothing.
const heartbeat = 15 * time.Second

// Access is whether the dashboard's identity may inject faults.
type Access struct {
	User    string `json:"user"`
	Allowed bool   `json:"allowed"`
	Reason  string `json:"reason,omitempty"`
}

// serveStream is GET /api/stream: server-sent events. The browser's
// EventSource keeps the connection open and reconnects by itself if it
// drops; the browser never asks the API server anything.
//
//	event: snapshot   data: Snapshot, once
//	event: change     data: Change, for every event an informer receives
//	event: sample     data: Sample, every sample interval (SampleInterval)
//
// net/http chunks the response; each message is flushed as written.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	// Subscribe before the snapshot, so that nothing falls between the
	// two: a change both in the snapshot and sent after it is applied
	// twice, which the page's state tolerates (it sets, never adds).
	changes := s.hub.Subscribe()
	defer s.hub.Unsubscribe(changes)
	samples := s.history.Subscribe()
	defer s.history.Unsubscribe(samples)

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	snap := s.snapshot(r)
	s.log.Info("browser stream opened", "remote", r.RemoteAddr, "nodes", len(snap.Nodes), "pods", snap.TotalPods, "podsSent", len(snap.Pods), "samples", len(snap.Samples))
	if send(w, "snapshot", snap) != nil {
		return
	}
	flusher.Flush()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	sent := 0
	defer func() { s.log.Info("browser stream closed", "remote", r.RemoteAddr, "changes", sent) }()
	for {
		var err error
		select {
		case <-r.Context().Done():
			return
		case ch, ok := <-changes:
			if !ok {
				return // dropped for falling behind: the browser reconnects
			}
			err = send(w, "change", ch)
			sent++
		case sm, ok := <-samples:
			if !ok {
				return
			}
			err = send(w, "sample", sm)
		case <-tick.C:
			_, err = fmt.Fprint(w, ": heartbeat\n\n")
		}
		if err != nil {
			return
		}
		flusher.Flush()
	}
}

// send writes one server-sent event.
func send(w http.ResponseWriter, event string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
	return err
}
