package e2e

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/mkube/mkube/internal/testserver"
)

// A pod's log over WebSocket (subprotocol binary.k8s.io), as browsers and
// Kubernetes' conformance suite read it: each message a piece of the log,
// and the stream closed at its end.
func TestAPodsLogOverWebSocket(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01")
	k := newKubectl(t, c)
	k.mustKubectl(t, "run", "alive", "--image", "busybox:1.36", "--restart", "Never", "--command", "--", "sh", "-c", "echo container is alive; sleep 3600")
	k.mustKubectl(t, "wait", "--for", "condition=Ready", "pod/alive", "--timeout", "30s")
	url := "ws" + strings.TrimPrefix(c.URL, "http") + "/api/v1/namespaces/default/pods/alive/log?container=alive"
	var got string
	testserver.EventuallyWithin(t, 20*time.Second, "the log arrives over the WebSocket", func() (bool, string) {
		dialer := websocket.Dialer{Subprotocols: []string{"binary.k8s.io"}, HandshakeTimeout: 5 * time.Second}
		ws, resp, err := dialer.Dial(url, http.Header{})
		if err != nil {
			return false, err.Error()
		}
		defer ws.Close()
		if p := resp.Header.Get("Sec-WebSocket-Protocol"); p != "binary.k8s.io" {
			return false, "subprotocol " + p
		}
		var buf bytes.Buffer
		for {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				break // the server closes the stream at the log's end
			}
			buf.Write(msg)
		}
		got = buf.String()
		return got == "container is alive\n", got
	})
}
