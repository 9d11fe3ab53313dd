package cri

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/proto/runtimev1"
)

// exchange sends datagram from src (zero: the node's network) to
// address and returns the answer: a pod of this node answers in the
// sender's goroutine, so an answer is there as the send returns, and a
// read that waits a moment for one that does not come fails with
// os.ErrDeadlineExceeded (the datagram was lost or ignored).
func (h *harness) exchange(t *testing.T, src netip.Addr, address, datagram string) (string, error) {
	t.Helper()
	conn, err := h.srv.net.DialOut(h.ctx, src, "udp", address)
	if err != nil {
		t.Fatalf("dial udp %s: %v", address, err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(datagram)); err != nil {
		t.Fatalf("write to %s: %v", address, err)
	}
	conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	buf := make([]byte, 2048)
	n, err := conn.Read(buf)
	return string(buf[:n]), err
}

// answer is exchange's answer once the server has bound its port: its
// program binds it as it starts, after the container is running.
func (h *harness) answer(t *testing.T, src netip.Addr, address, datagram string) string {
	t.Helper()
	var got string
	waitFor(t, address+" to answer", func() bool {
		var err error
		got, err = h.exchange(t, src, address, datagram)
		return err == nil
	})
	return got
}

// A Service's UDP port sends datagrams to its endpoints, and its TCP
// port of the same number connections: removing one protocol's port
// leaves the other's. A UDP port without endpoints answers with the
// port unreachable, and a hostPort maps UDP on its own.
func TestServicesAndHostPortsCarryUDP(t *testing.T) {
	h := newHarness(t, Options{})
	multi, _ := h.runImage(t, "multi", netexecImage, "netexec", "--http-port=80", "--udp-port=80")
	multiIP := h.podIP(t, multi)
	hostnamePod, _ := h.runImage(t, "raw", netexecImage, "serve-hostname", "--udp", "--http=false")
	rawIP := h.podIP(t, hostnamePod)
	// The client is a netexec pod of the cluster DNS, as Kubernetes'
	// tests' test pods are.
	cfg := h.podConfig("client")
	cfg.DnsConfig = clusterFirst
	sb, err := h.rt.RunPodSandbox(h.ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	netexec := containerConfig("app", netexecImage)
	netexec.Args = []string{"netexec"}
	h.start(t, h.create(t, sb.PodSandboxId, netexec))
	clientIP := netip.MustParseAddr(h.podIP(t, sb.PodSandboxId))

	ports := func(protocols ...string) []*runtimev1.ServicePort {
		var out []*runtimev1.ServicePort
		for _, p := range protocols {
			out = append(out, &runtimev1.ServicePort{Name: strings.ToLower(p) + "-port", Protocol: p, Port: 80, Backends: []string{multiIP + ":80"}})
		}
		return out
	}
	rules := func(protocols ...string) *runtimev1.SetServicesRequest {
		return &runtimev1.SetServicesRequest{LocalNodeIps: []string{"192.0.2.2"}, ClusterDns: []string{"10.96.0.10"}, ClusterDomain: "cluster.local", Services: []*runtimev1.Service{
			{Namespace: "default", Name: "multiprotocol", ClusterIps: []string{"10.96.0.40"}, Ports: ports(protocols...)},
			{Namespace: "default", Name: "dns", ClusterIps: []string{"10.96.0.41"}, Ports: []*runtimev1.ServicePort{{Protocol: "UDP", Port: 53}}},
		}}
	}
	// Whether a TCP connection to the cluster IP goes to the pod: with a
	// context already done, a connection the pod takes is made at once,
	// and any other (to the cluster IP itself, which no pod has) fails.
	done, cancel := context.WithCancel(h.ctx)
	cancel()
	tcpAnswers := func() bool {
		conn, err := h.srv.net.DialOut(done, clientIP, "tcp", "10.96.0.40:80")
		if err == nil {
			conn.Close()
		}
		return err == nil
	}

	if err := h.setServices(rules("TCP", "UDP")); err != nil {
		t.Fatal(err)
	}
	if got := h.answer(t, clientIP, "10.96.0.40:80", "hostName\n"); got != "multi" || !tcpAnswers() {
		t.Fatalf("both ports: UDP answered %q; TCP answers: %v", got, tcpAnswers())
	}
	// NAT is invisible to the client: its socket's far end is the
	// Service's address, not the pod's.
	for _, network := range []string{"tcp", "udp"} {
		conn, err := h.srv.net.DialOut(h.ctx, clientIP, network, "10.96.0.40:80")
		if err != nil {
			t.Fatal(err)
		}
		if got := conn.RemoteAddr().String(); got != "10.96.0.40:80" {
			t.Errorf("%s to the Service: the far end is %s, want 10.96.0.40:80", network, got)
		}
		conn.Close()
	}
	if got, err := h.exchange(t, clientIP, "10.96.0.40:80", "clientip"); err != nil || !strings.HasPrefix(got, clientIP.String()+":") {
		t.Errorf("netexec's clientip over UDP = %q, %v; want the client pod's %s:PORT", got, err, clientIP)
	}
	// netexec's /dial resolves the Service's name as the pod does.
	if _, body := h.get(t, "http://"+clientIP.String()+":8080/dial?request=hostname&protocol=udp&host=multiprotocol&port=80"); body != `{"responses":["multi"]}` {
		t.Errorf("/dial over udp to the Service's name = %s", body)
	}
	if resp, body := h.get(t, "http://"+clientIP.String()+":8080/dial?request=hostname&protocol=udp&host=nosuch&port=80"); resp.StatusCode != 400 || body != "host and/or port param are invalid. lookup nosuch: no such host\n" {
		t.Errorf("/dial to an unknown name = %d %q", resp.StatusCode, body)
	}
	if err := h.setServices(rules("TCP")); err != nil {
		t.Fatal(err)
	}
	// No rule: the datagram is routed to the cluster IP, which no pod has.
	if got, err := h.exchange(t, clientIP, "10.96.0.40:80", "hostName"); !errors.Is(err, os.ErrDeadlineExceeded) || !tcpAnswers() {
		t.Errorf("TCP only: UDP answered %q, %v, want nothing; TCP answers: %v", got, err, tcpAnswers())
	}
	if err := h.setServices(rules("UDP")); err != nil {
		t.Fatal(err)
	}
	if got, err := h.exchange(t, clientIP, "10.96.0.40:80", "hostName"); err != nil || got != "multi" || tcpAnswers() {
		t.Errorf("UDP only: UDP answered %q, %v; TCP answers: %v, want no answer", got, err, tcpAnswers())
	}

	if _, err := h.exchange(t, clientIP, "10.96.0.41:53", "query"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("a UDP port without endpoints: %v, want the port unreachable", err)
	}
	if _, err := h.exchange(t, clientIP, multiIP+":9999", "hostName"); !errors.Is(err, syscall.ECONNREFUSED) || !strings.Contains(err.Error(), "read: connection refused") {
		t.Errorf("a pod's unbound UDP port: %v, want read: connection refused", err)
	}
	if got := h.answer(t, clientIP, rawIP+":9376", "anything"); got != "raw" {
		t.Errorf("serve-hostname --udp answered %q", got)
	}

	// HostPort 54323 over UDP is the pod that maps it for UDP.
	h.pull(t, netexecImage)
	cfg = h.podConfig("udp-host-port")
	cfg.PortMappings = []*runtimeapi.PortMapping{{Protocol: runtimeapi.Protocol_UDP, ContainerPort: 8080, HostPort: 54323, HostIp: "192.0.2.2"}}
	resp, err := h.rt.RunPodSandbox(h.ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	c := containerConfig("app", netexecImage)
	c.Args = []string{"netexec", "--http-port=8008", "--udp-port=8080"}
	h.start(t, h.create(t, resp.PodSandboxId, c))
	if got := h.answer(t, netip.Addr{}, "192.0.2.2:54323", "hostname"); got != "udp-host-port" {
		t.Errorf("UDP host port: %q", got)
	}
	if _, err := h.srv.net.DialOut(h.ctx, netip.Addr{}, "tcp", "192.0.2.2:54323"); err == nil {
		t.Error("a UDP host port took a TCP connection")
	}
	if _, err := h.srv.net.DialOut(h.ctx, netip.Addr{}, "sctp", "192.0.2.2:54323"); err == nil || !strings.Contains(err.Error(), "unknown network sctp") {
		t.Errorf("dial sctp = %v, want unknown network", err)
	}
}
