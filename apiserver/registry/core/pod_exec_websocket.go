package core

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gorilla/websocket"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/utils/exec"

	"github.com/mkube/mkube/apiserver"
)

// translateToSPDY serves an exec or attach that came as WebSocket with
// the v5.channel.k8s.io protocol, which kubectl 1.29+ tries first: the
// kubelet speaks SPDY, so the API server ends the WebSocket itself and
// opens a SPDY stream to the kubelet at location, copying each channel
// (stdin 0, stdout 1, stderr 2, resize 4) to its stream, and writes the
// result on the error channel (3) as a Status: Success, or Failure with
// reason NonZeroExitCode and the exit code, which kubectl exits with.
// kube-apiserver's StreamTranslatorHandler does the same. v5 adds a
// CLOSE message to v4, so that kubectl can end stdin (`echo hi |
// kubectl exec -i`) and still read the output.
func translateToSPDY(q *apiserver.Request, location *url.URL, opts streamOptions) {
	channel := func(on bool, t wsstream.ChannelType) wsstream.ChannelType {
		if on {
			return t
		}
		return wsstream.IgnoreChannel
	}
	conn := wsstream.NewConn(map[string]wsstream.ChannelProtocolConfig{
		"v5.channel.k8s.io": {Binary: true, Channels: []wsstream.ChannelType{
			channel(opts.stdin, wsstream.ReadChannel), channel(opts.stdout, wsstream.WriteChannel),
			channel(opts.stderr, wsstream.WriteChannel), wsstream.WriteChannel, wsstream.ReadChannel}},
	})
	conn.SetIdleTimeout(4 * time.Hour) // the kubelet's streaming idle timeout
	_, streams, err := conn.Open(q.W, q.R)
	if err != nil {
		q.Log().Info("exec over WebSocket: upgrade failed", "err", err)
		return // Open answered the client
	}
	defer conn.Close()
	rt, err := spdy.NewRoundTripperWithConfig(spdy.RoundTripperConfig{TLS: q.Kubelet().TLSConfig()})
	if err != nil {
		writeStreamStatus(streams[3], err)
		return
	}
	exec, err := remotecommand.NewSPDYExecutorForTransports(rt, rt, "POST", location)
	if err != nil {
		writeStreamStatus(streams[3], err)
		return
	}
	so := remotecommand.StreamOptions{Tty: opts.tty}
	if opts.stdin {
		so.Stdin = streams[0]
	}
	if opts.stdout {
		so.Stdout = streams[1]
	}
	if opts.stderr {
		so.Stderr = streams[2]
	}
	if opts.tty {
		so.TerminalSizeQueue = &sizeQueue{json.NewDecoder(streams[4])}
	}
	writeStreamStatus(streams[3], exec.StreamWithContext(q.Context(), so))
}

// writeStreamStatus writes the result of a stream on the error channel,
// as the kubelet's streaming server writes it for protocol v4 and up.
func writeStreamStatus(w io.Writer, err error) {
	st := metav1.Status{Status: metav1.StatusSuccess}
	var exit utilexec.ExitError
	var apiStatus apierrors.APIStatus
	switch {
	case err == nil:
	case errors.As(err, &apiStatus): // the kubelet's own Status, as it sent it
		st = apiStatus.Status()
	case errors.As(err, &exit) && exit.Exited():
		st = metav1.Status{Status: metav1.StatusFailure, Reason: "NonZeroExitCode",
			Message: fmt.Sprintf("command terminated with non-zero exit code: %v", err),
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: "ExitCode", Message: strconv.Itoa(exit.ExitStatus())}}}}
	default:
		st = metav1.Status{Status: metav1.StatusFailure, Reason: metav1.StatusReasonInternalError,
			Message: fmt.Sprintf("Internal error occurred: %v", err)}
	}
	data, _ := json.Marshal(st)
	w.Write(data)
}

// sizeQueue is the client's window sizes, as the resize channel carries
// them (JSON {"Width":80,"Height":24}), for the SPDY stream's resize.
type sizeQueue struct{ dec *json.Decoder }

func (s *sizeQueue) Next() *remotecommand.TerminalSize {
	var size remotecommand.TerminalSize
	if err := s.dec.Decode(&size); err != nil {
		return nil
	}
	return &size
}

// portForwardTunnelProtocol is what kubectl 1.31+ asks for when it
// port-forwards over WebSocket: SPDY/3.1 carried in binary WebSocket
// messages, with portforward.k8s.io inside.
const portForwardTunnelProtocol = "SPDY/3.1+portforward.k8s.io"

// tunnelPortForward serves a port-forward tunnelled through a
// WebSocket. The kubelet speaks SPDY only, so the API server upgrades a
// connection to the kubelet at location to SPDY itself, then ends the
// client's WebSocket and copies the bytes (the SPDY frames, which the
// API server never reads) between the two, as kube-apiserver's
// TunnelingHandler does. A kubelet that refuses (no such pod) is
// answered before the WebSocket opens, so kubectl falls back to plain
// SPDY and shows the kubelet's words.
func tunnelPortForward(q *apiserver.Request, location *url.URL) {
	upstream, err := q.Kubelet().Dial(q.Context(), location.Host)
	if err != nil {
		q.Fail(apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach service: %v", err)))
		return
	}
	defer upstream.Close()
	req, err := http.NewRequestWithContext(q.Context(), http.MethodPost, location.String(), nil)
	if err != nil {
		q.Fail(apierrors.NewInternalError(err))
		return
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "SPDY/3.1")
	req.Header.Set("X-Stream-Protocol-Version", "portforward.k8s.io")
	if err := req.Write(upstream); err != nil {
		q.Fail(apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach service: %v", err)))
		return
	}
	fromKubelet := bufio.NewReader(upstream) // may hold the first frames after the 101
	resp, err := http.ReadResponse(fromKubelet, req)
	if err != nil {
		q.Fail(apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach service: %v", err)))
		return
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		q.W.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		q.W.WriteHeader(resp.StatusCode)
		q.W.Write(body)
		return
	}
	upgrader := websocket.Upgrader{Subprotocols: []string{portForwardTunnelProtocol},
		CheckOrigin: func(*http.Request) bool { return true }} // kubectl is no browser
	ws, err := upgrader.Upgrade(q.W, q.R, nil)
	if err != nil {
		return // Upgrade answered the client
	}
	defer ws.Close()
	// From the client to the kubelet, one goroutine, until the client
	// closes; closing upstream then ends the copy below.
	go func() {
		defer upstream.Close()
		for {
			_, r, err := ws.NextReader()
			if err != nil {
				return
			}
			if _, err := io.Copy(upstream, r); err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := fromKubelet.Read(buf)
		if n > 0 && ws.WriteMessage(websocket.BinaryMessage, buf[:n]) != nil {
			return
		}
		if err != nil {
			return
		}
	}
}
