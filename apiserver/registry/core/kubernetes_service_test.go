package core_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/apiserver/app"
	"github.com/mkube/mkube/apiserver/registry/core"
	"github.com/mkube/mkube/internal/testserver"
)

// kubernetesService is one API server's controller of default/kubernetes
// on s's storage, at ip:6443, with the leases given.
func kubernetesService(s *testserver.Server, ip string, leases core.Leases, clk clock.Clock, log *slog.Logger) *core.KubernetesService {
	return &core.KubernetesService{Services: s.API.StorageFor(core.Services.GroupVersionResource()),
		Endpoints:      s.API.StorageFor(core.Endpoints.GroupVersionResource()),
		EndpointSlices: s.API.StorageFor(discoveryv1.SchemeGroupVersion.WithResource("endpointslices")),
		Leases:         leases, IP: netip.MustParseAddr(ip), Port: 6443, Clock: clk, Log: log}
}

// endpointIPs are the addresses default/kubernetes's Endpoints and its
// EndpointSlice (found as the conformance suite finds it) list, each on
// the secure port, or why they are not that.
func endpointIPs(s *testserver.Server) (string, error) {
	var ep corev1.Endpoints
	s.Do("GET", "/api/v1/namespaces/default/endpoints/kubernetes", "", "", &ep)
	var fromEndpoints []string
	for _, sub := range ep.Subsets {
		if len(sub.Ports) != 1 || sub.Ports[0].Port != 6443 || sub.Ports[0].Name != "https" {
			return "", fmt.Errorf("endpoints ports %+v, want https 6443", sub.Ports)
		}
		for _, a := range sub.Addresses {
			fromEndpoints = append(fromEndpoints, a.IP)
		}
	}
	var found discoveryv1.EndpointSliceList
	s.Do("GET", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io/service-name%3Dkubernetes", "", "", &found)
	if len(found.Items) != 1 || found.Items[0].AddressType != discoveryv1.AddressTypeIPv4 || *found.Items[0].Ports[0].Port != 6443 {
		return "", fmt.Errorf("endpoint slices %+v, want one IPv4 slice on 6443", found.Items)
	}
	var fromSlice []string
	for _, e := range found.Items[0].Endpoints {
		if !*e.Conditions.Ready {
			return "", fmt.Errorf("endpoint %v is not ready", e.Addresses)
		}
		fromSlice = append(fromSlice, e.Addresses...)
	}
	if !slices.Equal(fromEndpoints, fromSlice) {
		return "", fmt.Errorf("the Endpoints list %v, the EndpointSlice %v", fromEndpoints, fromSlice)
	}
	return strings.Join(fromEndpoints, " "), nil
}

// mustEndpointIPs is endpointIPs, failing the test if they are not that.
func mustEndpointIPs(t *testing.T, s *testserver.Server) string {
	t.Helper()
	got, err := endpointIPs(s)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestTheKubernetesServiceLeadsToTheSecurePortAndIsKeptInPlace(t *testing.T) {
	s := testserver.StartServerWithout(t, []string{app.KubernetesServiceHook}) // this test's KubernetesService instead
	leases := &core.MasterLeases{Store: s.Store, TTL: core.MasterLeaseTTL}
	k := kubernetesService(s, "192.168.1.10", leases, clock.RealClock{}, slog.New(slog.DiscardHandler))
	check := func(when string) {
		t.Helper()
		if err := k.Reconcile(context.Background()); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		var svc corev1.Service
		s.Do("GET", "/api/v1/namespaces/default/services/kubernetes", "", "", &svc)
		if svc.Spec.ClusterIP != "10.96.0.1" || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 ||
			svc.Spec.Ports[0].Name != "https" || svc.Spec.Ports[0].TargetPort.IntValue() != 6443 || svc.Spec.Selector != nil {
			t.Fatalf("%s: service %+v", when, svc.Spec)
		}
		if got := mustEndpointIPs(t, s); got != "192.168.1.10" {
			t.Fatalf("%s: endpoints %q, want 192.168.1.10", when, got)
		}
		if live, err := leases.List(context.Background()); err != nil || len(live) != 1 || live[0] != k.IP {
			t.Fatalf("%s: master leases in etcd %v %v, want 192.168.1.10", when, live, err)
		}
	}
	check("first start")
	s.Do("PATCH", "/api/v1/namespaces/default/services/kubernetes", "application/merge-patch+json", `{"spec":{"ports":[{"name":"https","port":8443}]}}`, nil)
	s.Do("DELETE", "/api/v1/namespaces/default/endpoints/kubernetes", "", "", nil)
	s.Do("DELETE", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes", "", "", nil)
	check("after a user changed the Service and deleted its Endpoints and EndpointSlice")

	// The last API server to stop gives its lease back but leaves its
	// address: there is nobody else to list.
	if err := k.RemoveEndpoints(context.Background()); err != nil {
		t.Fatal(err)
	}
	if live, err := leases.List(context.Background()); err != nil || len(live) != 0 {
		t.Fatalf("master leases after RemoveEndpoints: %v %v, want none", live, err)
	}
	if got := mustEndpointIPs(t, s); got != "192.168.1.10" {
		t.Fatalf("after the last server left: endpoints %q, want 192.168.1.10 still", got)
	}
}

// clockLeases are Leases in memory that lapse on a fake clock, so that a
// test lets 15 s pass at once (etcd's own TTLs are store's test).
type clockLeases struct {
	clock   clock.Clock
	ttl     time.Duration
	mu      sync.Mutex
	expires map[netip.Addr]time.Time
}

func (l *clockLeases) Renew(_ context.Context, ip netip.Addr) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expires[ip] = l.clock.Now().Add(l.ttl)
	return nil
}

func (l *clockLeases) List(context.Context) ([]netip.Addr, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var live []netip.Addr
	for ip, end := range l.expires {
		if l.clock.Now().Before(end) {
			live = append(live, ip)
		}
	}
	slices.SortFunc(live, netip.Addr.Compare)
	return live, nil
}

func (l *clockLeases) Remove(_ context.Context, ip netip.Addr) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.expires, ip)
	return nil
}

func (l *clockLeases) expiry(ip string) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.expires[netip.MustParseAddr(ip)]
}

// Three API servers share the Endpoints by their leases: each lists every
// live one; a killed one stays until its lease lapses (15 s after its
// last renewal) and the next reconcile drops it; one stopped cleanly
// leaves at once; the last leaves its own address in.
func TestTheKubernetesEndpointsListEveryAPIServerWhoseLeaseIsLive(t *testing.T) {
	s := testserver.StartServerWithout(t, []string{app.KubernetesServiceHook})
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	leases := &clockLeases{clock: clk, ttl: core.MasterLeaseTTL, expires: map[netip.Addr]time.Time{}}
	var logs testserver.LogBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	servers := map[string]*core.KubernetesService{}
	for _, ip := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"} {
		servers[ip] = kubernetesService(s, ip, leases, clk, log)
	}
	reconcile := func(ips ...string) func() error {
		return func() error {
			for _, ip := range ips {
				if err := servers[ip].Reconcile(context.Background()); err != nil {
					return err
				}
			}
			return nil
		}
	}
	remove := func(ip string) func() error {
		return func() error { return servers[ip].RemoveEndpoints(context.Background()) }
	}
	steps := []struct {
		name    string
		advance time.Duration
		do      func() error
		want    string
		log     string // a line the step logs
	}{
		{"the three servers start one after the other: the endpoints list all three, sorted", 0,
			reconcile("10.0.0.3", "10.0.0.1", "10.0.0.2"), "10.0.0.1 10.0.0.2 10.0.0.3",
			`msg="added an API server to the kubernetes endpoints" apiserver=10.0.0.2 live="[10.0.0.1 10.0.0.2 10.0.0.3]"`},
		{"10 s on, 10.0.0.3 was killed and renews no more: its lease has 5 s left, it stays", 10 * time.Second,
			reconcile("10.0.0.1", "10.0.0.2"), "10.0.0.1 10.0.0.2 10.0.0.3", ""},
		{"5 s on, the lease of 10.0.0.3 has lapsed: the next reconcile drops it", 5 * time.Second,
			reconcile("10.0.0.1"), "10.0.0.1 10.0.0.2",
			`msg="removed an API server from the kubernetes endpoints" apiserver=10.0.0.3 live="[10.0.0.1 10.0.0.2]"`},
		{"10.0.0.2 stops cleanly: it takes itself out at once", 0,
			remove("10.0.0.2"), "10.0.0.1",
			`msg="removed an API server from the kubernetes endpoints" apiserver=10.0.0.2 live=[10.0.0.1]`},
		{"10.0.0.1, the last, stops: its address stays, as kube-apiserver refuses to erase every endpoint", 0,
			remove("10.0.0.1"), "10.0.0.1", `msg="the last API server leaves its address in the kubernetes endpoints" apiserver=10.0.0.1`},
		{"10.0.0.3 starts again: it replaces the address left behind", 0,
			reconcile("10.0.0.3"), "10.0.0.3", `msg="removed an API server from the kubernetes endpoints" apiserver=10.0.0.1 live=[10.0.0.3]`},
	}
	for _, step := range steps {
		clk.Step(step.advance)
		before := len(logs.String())
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got := mustEndpointIPs(t, s); got != step.want {
			t.Fatalf("%s: the endpoints list %q, want %q", step.name, got, step.want)
		}
		logged := logs.String()[before:]
		if step.log != "" && !strings.Contains(logged, step.log) {
			t.Fatalf("%s: the log lacks %s:\n%s", step.name, step.log, logged)
		}
		if step.log == "" && strings.Contains(logged, "kubernetes endpoints") {
			t.Fatalf("%s: nothing changed, yet the log says:\n%s", step.name, logged)
		}
	}
}

// Run reconciles at once and every 10 s of its clock; when its context
// ends it takes its server out of the endpoints before it returns.
func TestRunRenewsEvery10sAndLeavesTheEndpointsWhenItStops(t *testing.T) {
	s := testserver.StartServerWithout(t, []string{app.KubernetesServiceHook})
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	leases := &clockLeases{clock: clk, ttl: core.MasterLeaseTTL, expires: map[netip.Addr]time.Time{}}
	log := slog.New(slog.DiscardHandler)
	a, b := kubernetesService(s, "10.0.0.1", leases, clk, log), kubernetesService(s, "10.0.0.2", leases, clk, log)
	testserver.Background(t, a.Run)
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); b.Run(ctx) }()
	testserver.Eventually(t, "both servers in the endpoints", func() (bool, string) {
		got, err := endpointIPs(s)
		return err == nil && got == "10.0.0.1 10.0.0.2", fmt.Sprint(got, err)
	})

	testserver.Eventually(t, "both Runs waiting for their next reconcile", func() (bool, string) {
		return clk.Waiters() == 2, fmt.Sprintf("%d waiting", clk.Waiters())
	})
	first := leases.expiry("10.0.0.1")
	clk.Step(10 * time.Second)
	testserver.Eventually(t, "10.0.0.1's lease renewed 10 s later", func() (bool, string) {
		got := leases.expiry("10.0.0.1")
		return got.Equal(first.Add(10 * time.Second)), got.String()
	})

	stop()
	<-stopped
	if got := mustEndpointIPs(t, s); got != "10.0.0.1" {
		t.Fatalf("once 10.0.0.2's Run returned, the endpoints list %q, want 10.0.0.1", got)
	}
	if !leases.expiry("10.0.0.2").IsZero() {
		t.Fatal("10.0.0.2's lease is still there after its Run returned")
	}
}
