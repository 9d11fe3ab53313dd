package cri

import (
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/proto/runtimev1"
)

// The guestbook of Kubernetes' kubectl tests: a replica registers with
// the primary through the Service agnhost-primary, and the frontend
// sets through the primary and gets through agnhost-replica, so what it
// reads back was pushed from the primary to the replica.
func TestTheGuestbookKeepsWhatItIsGiven(t *testing.T) {
	h := newHarness(t, Options{})
	h.pull(t, netexecImage)
	run := func(name string, args ...string) string {
		cfg := h.podConfig(name)
		cfg.DnsConfig = clusterFirst
		sb, err := h.rt.RunPodSandbox(h.ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		c := containerConfig("app", netexecImage)
		c.Args = append([]string{"guestbook"}, args...)
		h.start(t, h.create(t, sb.PodSandboxId, c))
		return h.podIP(t, sb.PodSandboxId)
	}
	primary := run("primary", "--http-port", "6379")
	replica := run("replica", "--replicaof", "agnhost-primary", "--http-port", "6379")
	frontend := run("frontend", "--backend-port", "6379")
	service := func(name, ip, backend string) *runtimev1.Service {
		return &runtimev1.Service{Namespace: "default", Name: name, ClusterIps: []string{ip},
			Ports: []*runtimev1.ServicePort{{Protocol: "TCP", Port: 6379, Backends: []string{backend + ":6379"}}}}
	}
	if err := h.setServices(&runtimev1.SetServicesRequest{ClusterDns: []string{"10.96.0.10"}, ClusterDomain: "cluster.local",
		Services: []*runtimev1.Service{service("agnhost-primary", "10.96.0.50", primary), service("agnhost-replica", "10.96.0.51", replica)}}); err != nil {
		t.Fatal(err)
	}
	// The replica retries each second of the runtime's clock until the
	// primary answers through its Service. The primary logs the
	// registration before it answers, and the replica once it has the
	// answer: both lines, in either order.
	waitFor(t, "the replica to register", func() bool {
		h.clock.Step(100 * time.Millisecond)
		return strings.Contains(h.logOf(t, "primary"), "Node '"+replica+"' registered.") &&
			strings.Contains(h.logOf(t, "replica"), "Registered to node: agnhost-primary")
	})

	for _, tc := range []struct{ query, want string }{
		{"cmd=get&key=messages&value=", `{"data":""}`},
		{"cmd=set&key=messages&value=TestEntry", `{"message":"Updated"}`},
		{"cmd=get&key=messages&value=", `{"data":"TestEntry"}`},
	} {
		if _, body := h.get(t, "http://"+frontend+":80/guestbook?"+tc.query); body != tc.want {
			t.Errorf("/guestbook?%s = %s, want %s", tc.query, body, tc.want)
		}
	}
	if resp, body := h.get(t, "http://"+frontend+":80/guestbook?cmd=del"); resp.StatusCode != 400 || body != "unsupported cmd: 'del'\n" {
		t.Errorf("an unknown cmd: %d %q", resp.StatusCode, body)
	}
	if _, body := h.get(t, "http://"+replica+":6379/get"); body != `{"data":{"messages":"TestEntry"}}` {
		t.Errorf("the replica's whole store = %s", body)
	}
}
