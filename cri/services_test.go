package cri

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/images/shell"
	"github.com/mkube/mkube/network/dns"
	"github.com/mkube/mkube/proto/runtimev1"
)

// clusterFirst is the DNS config the kubelet gives a ClusterFirst pod
// of namespace default.
var clusterFirst = &runtimeapi.DNSConfig{Servers: []string{"10.96.0.10"},
	Searches: []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local"}, Options: []string{"ndots:5"}}

// runClient runs a busybox pod whose resolv.conf is dns, and answers
// its container.
func (h *harness) runClient(t *testing.T, name string, dns *runtimeapi.DNSConfig) string {
	t.Helper()
	cfg := h.podConfig(name)
	cfg.DnsConfig = dns
	resp, err := h.rt.RunPodSandbox(h.ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	h.pull(t, "busybox:1.36")
	c := containerConfig("app", "busybox:1.36")
	c.Command = []string{"sleep", "3600"}
	id := h.create(t, resp.PodSandboxId, c)
	h.start(t, id)
	return id
}

func (h *harness) setServices(req *runtimev1.SetServicesRequest) error {
	_, err := runtimev1.NewPodNetworkClient(h.conn).SetServices(h.ctx, req)
	return err
}

// A connection to a Service's cluster IP, or its name, goes to one of
// its endpoints, as kube-proxy's rules send it; with ClientIP affinity
// always to the same one; one to a Service without endpoints is refused;
// an endpoint outside the pod network (the API server's) is reached on
// the node's own network.
func TestAServiceSendsConnectionsToItsEndpoints(t *testing.T) {
	h := newHarness(t, Options{})
	var backends []string
	for _, name := range []string{"web-1", "web-2"} {
		pod, _ := h.runImage(t, name, netexecImage, "netexec", "--http-port=8080")
		backends = append(backends, h.podIP(t, pod)+":8080")
		h.get(t, "http://"+h.podIP(t, pod)+":8080/hostname") // waits until netexec listens: it binds as it starts
	}
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "the API server") }))
	defer host.Close()
	hostAddr := strings.TrimPrefix(host.URL, "http://")
	web := func(affinity int32) *runtimev1.SetServicesRequest {
		return &runtimev1.SetServicesRequest{ClusterDns: []string{"10.96.0.10"}, ClusterDomain: "cluster.local",
			Services: []*runtimev1.Service{
				{Namespace: "default", Name: "kubernetes", ClusterIps: []string{"10.96.0.1"},
					Ports: []*runtimev1.ServicePort{{Name: "https", Protocol: "TCP", Port: 443, Backends: []string{hostAddr}}}},
				{Namespace: "default", Name: "web", ClusterIps: []string{"10.96.0.20"}, AffinityTimeoutSeconds: affinity,
					Ports: []*runtimev1.ServicePort{{Protocol: "TCP", Port: 80, Backends: backends}}},
				{Namespace: "default", Name: "empty", ClusterIps: []string{"10.96.0.30"},
					Ports: []*runtimev1.ServicePort{{Protocol: "TCP", Port: 80}}},
			}}
	}
	if err := h.setServices(web(0)); err != nil {
		t.Fatal(err)
	}
	client := h.runClient(t, "client", clusterFirst)

	hostnames := func(url string) map[string]int {
		out, stderr, code := h.execCode(t, client, "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do wget -qO- "+url+"; echo; done")
		if code != 0 {
			t.Fatalf("wget %s: exit %d, %s", url, code, stderr)
		}
		seen := map[string]int{}
		for _, line := range strings.Fields(out) {
			seen[line]++
		}
		return seen
	}
	// 16 tries at random over two endpoints: both answer, but for a
	// chance of 2^-15.
	for _, url := range []string{"http://10.96.0.20/hostname", "http://web/hostname", "http://web.default.svc.cluster.local/hostname"} {
		if seen := hostnames(url); len(seen) != 2 || seen["web-1"] == 0 || seen["web-2"] == 0 {
			t.Errorf("%s answered %v, want both endpoints", url, seen)
		}
	}
	if err := h.setServices(web(10800)); err != nil {
		t.Fatal(err)
	}
	first := hostnames("http://web/hostname")
	if len(first) != 1 {
		t.Errorf("with ClientIP affinity, answers came from %v, want one endpoint", first)
	}
	// New rules (another Service's endpoints changed) keep the affinity:
	// 8 rounds of new rules and one connection each, all to the same
	// endpoint (new affinities would pick it with a chance of 2^-8).
	for range 8 {
		if err := h.setServices(web(10800)); err != nil {
			t.Fatal(err)
		}
		out, _, _ := h.execCode(t, client, "wget -qO- http://web/hostname")
		if first[out] == 0 {
			t.Fatalf("after new rules, %s answered, want the endpoint of before %v", out, first)
		}
	}

	out, stderr, code := h.execCode(t, client, "wget -qO- http://empty/")
	if code != 1 || stderr != "wget: can't connect to remote host (10.96.0.30): Connection refused\n" {
		t.Errorf("a Service without endpoints: exit %d, %q %q; want refused", code, out, stderr)
	}
	out, stderr, code = h.execCode(t, client, "wget -qO- http://kubernetes.default:443/")
	if code != 0 || out != "the API server" {
		t.Errorf("the kubernetes Service: exit %d, %q %q", code, out, stderr)
	}
}

// nslookup asks the cluster DNS, through the pod's search list: a
// Service's name is its cluster IP, a headless Service's its endpoints,
// a pod's hostname under its subdomain its IP, an ExternalName a CNAME,
// and a pod of another nameserver finds no cluster name.
func TestTheClusterDNSAnswersFromTheServices(t *testing.T) {
	h := newHarness(t, Options{})
	err := h.setServices(&runtimev1.SetServicesRequest{ClusterDns: []string{"10.96.0.10"}, ClusterDomain: "cluster.local",
		Services: []*runtimev1.Service{
			{Namespace: "default", Name: "web", ClusterIps: []string{"10.96.0.20"},
				Ports: []*runtimev1.ServicePort{{Name: "http", Protocol: "TCP", Port: 80}}},
			{Namespace: "db", Name: "pg", Endpoints: []*runtimev1.Endpoint{{Ip: "10.244.1.7", Hostname: "pg-0"}, {Ip: "10.244.1.8"}},
				Ports: []*runtimev1.ServicePort{{Name: "pg", Protocol: "TCP", Port: 5432, Backends: []string{"10.244.1.7:5432", "10.244.1.8:5432"}}}},
			{Namespace: "default", Name: "alias", ExternalName: "web.default.svc.cluster.local"},
		}})
	if err != nil {
		t.Fatal(err)
	}
	client := h.runClient(t, "client", clusterFirst)
	for _, tc := range []struct {
		name, want string
		code       int32
	}{
		{"web", "Name:\tweb.default.svc.cluster.local\nAddress: 10.96.0.20\n", 0},
		{"web.default", "Name:\tweb.default.svc.cluster.local\nAddress: 10.96.0.20\n", 0},
		{"pg.db", "Name:\tpg.db.svc.cluster.local\nAddress: 10.244.1.7\nAddress: 10.244.1.8\n", 0},
		{"pg-0.pg.db.svc.cluster.local", "Name:\tpg-0.pg.db.svc.cluster.local\nAddress: 10.244.1.7\n", 0},
		{"10-244-1-9.db.pod.cluster.local", "Address: 10.244.1.9\n", 0},
		{"alias", "alias.default.svc.cluster.local\tcanonical name = web.default.svc.cluster.local.\nName:\tweb.default.svc.cluster.local\nAddress: 10.96.0.20\n", 0},
		{"pg", "** server can't find pg: NXDOMAIN\n", 1}, // another namespace's, by its short name
		{"nosuch.example.com", "** server can't find nosuch.example.com: NXDOMAIN\n", 1},
		{"10.96.0.20", "20.0.96.10.in-addr.arpa\tname = web.default.svc.cluster.local\n", 0}, // its PTR record
		{"10.96.9.9", "** server can't find 9.9.96.10.in-addr.arpa: NXDOMAIN\n", 1},
	} {
		out, stderr, code := h.execCode(t, client, "nslookup "+tc.name)
		if code != tc.code || !strings.HasPrefix(out, "Server:\t\t10.96.0.10\nAddress:\t10.96.0.10:53\n\n") || !strings.Contains(out, tc.want) {
			t.Errorf("nslookup %s: exit %d\n%s%s\nwant exit %d and %q", tc.name, code, out, stderr, tc.code, tc.want)
		}
	}
	// dig and getent, as Kubernetes' DNS tests probe.
	for _, tc := range []struct{ cmd, want string }{
		{"dig +notcp +noall +answer +search web A", "web.default.svc.cluster.local.\t\t30\tIN\tA\t10.96.0.20\n"},
		{"dig +tcp +noall +answer +search nosuch A", ""},
		{"dig +short _http._tcp.web.default.svc.cluster.local SRV", "0 100 80 web.default.svc.cluster.local.\n"},
		{"dig +short _pg._tcp.pg.db.svc.cluster.local SRV", "0 50 5432 pg-0.pg.db.svc.cluster.local.\n0 50 5432 10-244-1-8.pg.db.svc.cluster.local.\n"},
		{"dig +short 10-244-1-8.pg.db.svc.cluster.local", "10.244.1.8\n"},
		{"dig +short -x 10.96.0.20", "web.default.svc.cluster.local.\n"},
		{"dig +noall +answer 20.0.96.10.in-addr.arpa. PTR", "20.0.96.10.in-addr.arpa.\t\t30\tIN\tPTR\tweb.default.svc.cluster.local.\n"},
		{"dig +short alias.default.svc.cluster.local CNAME", "web.default.svc.cluster.local.\n"},
		{"dig +short alias.default.svc.cluster.local", "web.default.svc.cluster.local.\n10.96.0.20\n"},
		{"getent hosts web", "10.96.0.20      web.default.svc.cluster.local\n"},
	} {
		if out, stderr, code := h.execCode(t, client, tc.cmd); code != 0 || out != tc.want {
			t.Errorf("%s: exit %d\n%q%s\nwant %q", tc.cmd, code, out, stderr, tc.want)
		}
	}
	if _, _, code := h.execCode(t, client, "getent hosts nosuch"); code != 2 {
		t.Errorf("getent hosts of an unknown name: exit %d, want 2", code)
	}
	// A pod of dnsPolicy Default asks the node's nameserver, and mkube's
	// nodes have none.
	other := h.runClient(t, "other", &runtimeapi.DNSConfig{Servers: []string{"192.0.2.53"}})
	if out, _, code := h.execCode(t, other, "nslookup web.default.svc.cluster.local"); code != 1 || !strings.Contains(out, "no servers could be reached") {
		t.Errorf("another nameserver: exit %d, %s", code, out)
	}
	_, stderr, code := h.execCode(t, client, "wget -qO- http://nosuch/")
	if code != 1 || !strings.Contains(stderr, "bad address 'nosuch'") {
		t.Errorf("wget of an unknown name: exit %d, %q", code, stderr)
	}
}

// Bad rules are InvalidArgument and change nothing; a peer may not set
// them.
func TestBadServiceRulesChangeNothing(t *testing.T) {
	h := newHarness(t, Options{})
	good := &runtimev1.SetServicesRequest{ClusterDns: []string{"10.96.0.10"}, ClusterDomain: "cluster.local",
		Services: []*runtimev1.Service{{Namespace: "default", Name: "web", ClusterIps: []string{"10.96.0.20"}}}}
	if err := h.setServices(good); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []*runtimev1.SetServicesRequest{
		{Services: []*runtimev1.Service{{Name: "x", ClusterIps: []string{"10.96.0.300"}}}},
		{Services: []*runtimev1.Service{{Name: "x", ClusterIps: []string{"10.96.0.2"}, Ports: []*runtimev1.ServicePort{{Port: 70000}}}}},
		{Services: []*runtimev1.Service{{Name: "x", ClusterIps: []string{"10.96.0.2"}, Ports: []*runtimev1.ServicePort{{Port: 80, Backends: []string{"10.244.0.5"}}}}}},
		{NodeIps: []string{"node01"}},
		{ClusterDns: []string{"10.96.0.10"}},
		{Services: []*runtimev1.Service{{Name: "x", Endpoints: []*runtimev1.Endpoint{{Ip: "pod"}}}}},
	} {
		if err := h.setServices(bad); status.Code(err) != codes.InvalidArgument {
			t.Errorf("SetServices(%v) = %v, want InvalidArgument", bad, err)
		}
	}
	reply, err := dns.NewPodResolver(h.srv.dns, clusterFirst).Lookup(h.ctx, shell.DNSQuestion{Name: "web.default.svc.cluster.local.", Type: "A"})
	if err != nil || reply.Rcode != "NOERROR" {
		t.Errorf("a refused SetServices changed the rules: web's name answers %v (err %v)", reply, err)
	}
}

// A pod's hostPort is open on the node's address it names: from the
// node's own network, 127.0.0.1:PORT is the pod that maps it on
// 127.0.0.1, NODE-IP:PORT the one that maps it on the node's IP, as the
// portmap plugin's DNAT rules send them.
func TestHostPortsGoToThePodsThatMapThem(t *testing.T) {
	h := newHarness(t, Options{})
	if err := h.setServices(&runtimev1.SetServicesRequest{LocalNodeIps: []string{"192.0.2.2"}}); err != nil {
		t.Fatal(err)
	}
	h.pull(t, netexecImage)
	for name, hostIP := range map[string]string{"pod1": "127.0.0.1", "pod2": "192.0.2.2"} {
		cfg := h.podConfig(name)
		cfg.PortMappings = []*runtimeapi.PortMapping{{Protocol: runtimeapi.Protocol_TCP, ContainerPort: 8080, HostPort: 54323, HostIp: hostIP}}
		resp, err := h.rt.RunPodSandbox(h.ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		c := containerConfig("app", netexecImage)
		c.Args = []string{"netexec", "--http-port=8080"}
		id := h.create(t, resp.PodSandboxId, c)
		h.start(t, id)
	}
	for address, want := range map[string]string{"127.0.0.1:54323": "pod1", "192.0.2.2:54323": "pod2"} {
		client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			return h.srv.net.DialOut(ctx, netip.Addr{}, "tcp", addr)
		}}}
		var got string
		waitFor(t, address+" answers", func() bool {
			resp, err := client.Get("http://" + address + "/hostname")
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			got = string(body)
			return true
		})
		if got != want {
			t.Errorf("%s answered %q, want %q", address, got, want)
		}
	}
	if _, err := h.srv.net.DialOut(h.ctx, netip.Addr{}, "tcp", "192.0.2.2:54324"); err == nil {
		t.Error("a host port nobody maps connected")
	}
}

// Through its peer address a runtime serves only Dial: another node may
// not set its Service rules.
func TestAPeerMayNotSetServices(t *testing.T) {
	_, _, peer := twoNodes(t)
	conn, err := grpc.NewClient(peer, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = runtimev1.NewPodNetworkClient(conn).SetServices(context.Background(), &runtimev1.SetServicesRequest{})
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("SetServices through the peer address = %v, want PermissionDenied", err)
	}
}
