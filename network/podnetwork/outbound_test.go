package podnetwork

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/network/proxy"
	"github.com/mkube/mkube/proto/runtimev1"
)

// onePod is a node's sandboxes: one pod, whose IP nothing listens on.
type onePod struct{ ip netip.Addr }

func (p onePod) Listener(_ string, ip netip.Addr, _ int32) (string, *Listener, bool) {
	return "default/client", nil, ip == p.ip
}

func (onePod) HostPort(string, netip.AddrPort) (netip.AddrPort, bool) {
	return netip.AddrPort{}, false
}

// A pod reaches a Node's address on the host's network, from its own
// node's address, as a pod reaches a kubelet's port on Kubernetes; its
// own loopback stays its own. The nodes are 127.0.0.2 (this one) and
// 127.0.0.3, as `make local` gives them (the host has all of 127/8),
// and 127.0.0.1, as the e2e clusters' nodes are: localhost wins.
func TestAPodDialsANodesAddressOnTheHostsNetwork(t *testing.T) {
	tests := []struct {
		name       string
		hostNet    bool   // the dial is a hostNetwork pod's, from the node's network
		listenOn   string // the host's server
		dial       string // the pod's dial, to the server's port
		wantFrom   string // the address the server sees call ("": the dial must not reach it)
		wantRefuse bool
	}{
		{"another node's address, as a kubelet's port", false, "127.0.0.3", "127.0.0.3", "127.0.0.2", false},
		{"its own node's address", false, "127.0.0.2", "127.0.0.2", "127.0.0.2", false},
		{"127.0.0.1 is the pod's loopback, not the host's, though a Node has it", false, "127.0.0.1", "127.0.0.1", "", true},
		{"a loopback address that is no Node's is the pod's", false, "127.0.0.9", "127.0.0.9", "", true},
		{"from the host network, another node's address", true, "127.0.0.3", "127.0.0.3", "127.0.0.2", false},
		{"from the host network, 127.0.0.1 is the node's loopback, which refuses", true, "127.0.0.1", "127.0.0.1", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := net.Listen("tcp", tt.listenOn+":0")
			if err != nil {
				t.Skipf("this host has no %s: %v", tt.listenOn, err)
			}
			defer l.Close()
			accepted := make(chan string, 1)
			go func() {
				conn, err := l.Accept()
				if err != nil {
					return
				}
				defer conn.Close()
				accepted <- conn.RemoteAddr().(*net.TCPAddr).IP.String()
				io.WriteString(conn, "hello from the host\n")
			}()

			podIP := netip.MustParseAddr("10.244.2.5")
			rules, err := proxy.ParseRules(&runtimev1.SetServicesRequest{NodeIps: []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}, LocalNodeIps: []string{"127.0.0.2"}})
			if err != nil {
				t.Fatal(err)
			}
			clk := clocktesting.NewFakeClock(time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC))
			services := proxy.NewTable(clk)
			services.Replace(rules)
			n := &Node{PodCIDR: netip.MustParsePrefix("10.244.2.0/24"), Sandboxes: onePod{ip: podIP}, Services: services,
				Routes: NewRouteTable(), Clock: clk, Log: slog.New(slog.DiscardHandler)}

			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			port := l.Addr().(*net.TCPAddr).Port
			src := podIP
			if tt.hostNet {
				src = netip.Addr{}
			}
			conn, err := n.DialOut(ctx, src, "tcp", net.JoinHostPort(tt.dial, strconv.Itoa(port)))
			if tt.wantRefuse {
				if err == nil || !strings.Contains(err.Error(), "connection refused") {
					t.Fatalf("dial %s: %v, want the dialler's own loopback to refuse", tt.dial, err)
				}
				select {
				case from := <-accepted:
					t.Errorf("the host's server on %s was reached from %s", tt.listenOn, from)
				default:
				}
				return
			}
			if err != nil {
				t.Fatalf("dial %s: %v", tt.dial, err)
			}
			defer conn.Close()
			line, err := io.ReadAll(conn)
			if err != nil || string(line) != "hello from the host\n" {
				t.Errorf("read %q, %v; want the host's server's greeting", line, err)
			}
			if from := <-accepted; from != tt.wantFrom {
				t.Errorf("the host's server saw the pod's connection from %s, want the node's address %s", from, tt.wantFrom)
			}
		})
	}
}
