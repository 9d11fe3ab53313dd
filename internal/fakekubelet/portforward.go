package fakekubelet

import (
	"io"
	"net"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
)

// servePortForward upgrades to SPDY/3.1 as the kubelet's port-forward
// does and connects each data stream to ForwardTo; the error stream
// stays silent.
func (k *Kubelet) servePortForward(w http.ResponseWriter, r *http.Request) {
	if k.ForwardTo == "" {
		http.Error(w, "no pod to forward to", http.StatusNotFound)
		return
	}
	w.Header().Set(httpstream.HeaderProtocolVersion, "portforward.k8s.io")
	streams := make(chan httpstream.Stream, 8)
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, _ <-chan struct{}) error {
		streams <- s
		return nil
	})
	if conn == nil {
		return
	}
	defer conn.Close()
	for {
		select {
		case <-conn.CloseChan():
			return
		case s := <-streams:
			if s.Headers().Get(corev1.StreamType) == corev1.StreamTypeData {
				go k.forward(s)
			}
		}
	}
}

// forward pipes one data stream to a new connection to ForwardTo.
func (k *Kubelet) forward(s httpstream.Stream) {
	defer s.Close()
	tcp, err := net.Dial("tcp", k.ForwardTo)
	if err != nil {
		s.Reset()
		return
	}
	defer tcp.Close()
	go func() {
		io.Copy(tcp, s)
		tcp.(*net.TCPConn).CloseWrite()
	}()
	io.Copy(s, tcp)
}
