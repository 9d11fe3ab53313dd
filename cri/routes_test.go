package cri

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/proto/runtimev1"
)

const netexecImage = "registry.k8s.io/e2e-test-images/agnhost:2.53"

// twoNodes is two runtimes, as on two nodes, whose pod CIDRs are
// 10.244.1.0/24 and 10.244.2.0/24; the second serves its peer address.
func twoNodes(t *testing.T) (a, b *harness, peer string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a = newHarness(t, Options{PodCIDR: netip.MustParsePrefix("10.244.1.0/24")})
	b = newHarness(t, Options{PodCIDR: netip.MustParsePrefix("10.244.2.0/24"), PeerAddress: l.Addr().String()})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- b.srv.ServePeers(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("ServePeers: %v", err)
		}
	})
	return a, b, l.Addr().String()
}

func (h *harness) setRoutes(routes ...*runtimev1.Route) (*runtimev1.SetRoutesResponse, error) {
	return runtimev1.NewPodNetworkClient(h.conn).SetRoutes(h.ctx, &runtimev1.SetRoutesRequest{Routes: routes})
}

func (h *harness) execCode(t *testing.T, id, script string) (stdout, stderr string, code int32) {
	t.Helper()
	resp, err := h.rt.ExecSync(h.ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: []string{"sh", "-c", script}})
	if err != nil {
		t.Fatalf("exec %q: %v", script, err)
	}
	return string(resp.Stdout), string(resp.Stderr), resp.ExitCode
}

// A container reaches a pod on another node at its IP, through the
// route its kubelet set, and the pod sees the caller's own pod IP: the
// Kubernetes network model, with no NAT between pods.
func TestAPodReachesAPodOnAnotherNodeByItsRoute(t *testing.T) {
	a, b, peer := twoNodes(t)
	serverPod, _ := b.runImage(t, "server", netexecImage, "netexec", "--http-port=8080")
	serverIP := b.podIP(t, serverPod)
	_, hostname := b.get(t, "http://"+serverIP+":8080/hostname") // netexec listens

	clientPod, client := a.runImage(t, "client", netexecImage, "netexec", "--http-port=8080")
	clientIP := a.podIP(t, clientPod)

	// With no route, 10.244.2.0/24 is no pod's on A's bridge: curl's
	// connect timeout (on the runtime's clock) comes before ARP gives up.
	noRoute := make(chan string)
	go func() {
		_, stderr, _ := a.execCode(t, client, "curl -sS --connect-timeout 1 http://"+serverIP+":8080/")
		noRoute <- stderr
	}()
	var stderr string
	waitFor(t, "curl's connect timeout", func() bool {
		select {
		case stderr = <-noRoute:
			return true
		default:
			a.clock.Step(100 * time.Millisecond) // the runtime has timers of its own: step until curl's fires
			return false
		}
	})
	if !strings.Contains(stderr, "Timeout was reached") {
		t.Fatalf("curl without a route: %q, want its connect timeout", stderr)
	}

	resp, err := a.setRoutes(&runtimev1.Route{PodCidr: "10.244.2.0/24", Peer: peer})
	if err != nil || resp.PeerAddress != "" {
		t.Fatalf("SetRoutes: %v %v (A has no peer address)", resp, err)
	}
	if r, err := b.setRoutes(); err != nil || r.PeerAddress != peer {
		t.Fatalf("SetRoutes on B: %v %v, want its peer address %s", r, err, peer)
	}

	stdout, stderr, code := a.execCode(t, client, "curl -sS http://"+serverIP+":8080/clientip")
	if code != 0 || !strings.HasPrefix(stdout, clientIP+":") {
		t.Fatalf("curl /clientip across nodes: %q %q exit %d, want %s:PORT", stdout, stderr, code, clientIP)
	}
	if stdout, _, code := a.execCode(t, client, "wget -qO- http://"+serverIP+":8080/echo?msg=hi && nc -z "+serverIP+" 8080"); code != 0 || stdout != "hi" {
		t.Fatalf("wget and nc across nodes: %q exit %d", stdout, code)
	}
	if _, stderr, code := a.execCode(t, client, "curl -sS http://"+serverIP+":9999/"); code != 7 ||
		!strings.Contains(stderr, "Couldn't connect to server") {
		t.Fatalf("a closed port across nodes: %q exit %d, want curl's 7", stderr, code)
	}

	// netexec's /dial, as the e2e networking and lifecycle-hook tests use it.
	_, body := a.get(t, "http://"+clientIP+":8080/dial?request=hostname&protocol=http&host="+serverIP+"&port=8080&tries=2")
	if want := `{"responses":["` + hostname + `","` + hostname + `"]}`; body != want {
		t.Fatalf("/dial = %s, want %s", body, want)
	}
	_, body = a.get(t, "http://"+clientIP+":8080/dial?request=hostname&protocol=http&host="+serverIP+"&port=9999&tries=1")
	if body != `{"errors":["Get \"http://`+serverIP+`:9999/hostname\": dial tcp `+serverIP+`:9999: connect: connection refused"]}` {
		t.Fatalf("/dial to a closed port = %s", body)
	}

	// UDP: datagrams through the tunnel, answered by netexec's UDP server
	// (8081 by default); a port nothing has bound answers with the ICMP
	// port unreachable.
	_, body = a.get(t, "http://"+clientIP+":8080/dial?request=hostname&protocol=udp&host="+serverIP+"&port=8081&tries=2")
	if want := `{"responses":["` + hostname + `","` + hostname + `"]}`; body != want {
		t.Fatalf("/dial over udp = %s, want %s", body, want)
	}
	_, body = a.get(t, "http://"+clientIP+":8080/dial?request=clientip&protocol=udp&host="+serverIP+"&port=8081")
	if !strings.HasPrefix(body, `{"responses":["`+clientIP+":") {
		t.Fatalf("/dial over udp, clientip = %s, want %s:PORT", body, clientIP)
	}
	_, body = a.get(t, "http://"+clientIP+":8080/dial?request=hostname&protocol=udp&host="+serverIP+"&port=9999")
	if !strings.HasPrefix(body, `{"errors":["reading from udp connection failed. err:'read udp `+clientIP+":") ||
		!strings.HasSuffix(body, `-\u003e`+serverIP+`:9999: read: connection refused'"]}`) { // json.Marshal escapes ">"
		t.Fatalf("/dial over udp to an unbound port = %s", body)
	}
	if stdout, _, code := a.execCode(t, client, "echo hostName | nc -u "+serverIP+" 9999; echo $?"); stdout != "1\n" || code != 0 {
		t.Fatalf("nc -u to an unbound port across nodes: %q exit %d, want nc's status 1", stdout, code)
	}
	if log := b.logOf(t, "server"); !strings.Contains(log, "GET /clientip") || !strings.Contains(log, "GET /hostname") ||
		!strings.Contains(log, "Sending udp hostName response") || !strings.Contains(log, "Sending clientip back to UDP client "+clientIP+":") {
		t.Fatalf("the server's log lacks the requests:\n%s", log)
	}
}

// Only the CRI socket sets routes: a peer may only Dial. A bad route
// is refused and changes nothing.
func TestRoutesAreTheKubeletsToSet(t *testing.T) {
	a, b, peer := twoNodes(t)
	conn, err := grpc.NewClient(peer, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = runtimev1.NewPodNetworkClient(conn).SetRoutes(b.ctx, &runtimev1.SetRoutesRequest{})
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("SetRoutes through the peer address: %v, want PermissionDenied", err)
	}

	good := &runtimev1.Route{PodCidr: "10.244.2.0/24", Peer: peer}
	if _, err := a.setRoutes(good); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []*runtimev1.Route{{PodCidr: "10.244.3.0", Peer: peer}, {PodCidr: "fd00::/64", Peer: peer}, {PodCidr: "10.244.3.0/24", Peer: "nohost"}} {
		_, err := a.setRoutes(good, bad)
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("SetRoutes(%v): %v, want InvalidArgument", bad, err)
		}
	}
	if a.srv.routes.Lookup(netip.MustParseAddr("10.244.2.7")) == nil {
		t.Fatal("a refused SetRoutes dropped the routes before it")
	}
	if a.srv.routes.Lookup(netip.MustParseAddr("10.244.3.7")) != nil {
		t.Fatal("a refused SetRoutes added a route")
	}
}
