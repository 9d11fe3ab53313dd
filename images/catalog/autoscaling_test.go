package catalog

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/images/shell"
)

// idle is what an idle container accrues in d: 5 microcores.
func idle(d time.Duration) time.Duration { return d / 200000 }

// A request to hpa-example costs its loop's 0.15 CPU-seconds, and takes
// that long at a core, twice that under 500m; nginx's static file costs
// 50 µs, charged at once.
func TestRequestsCostCPU(t *testing.T) {
	tests := []struct {
		name, ref, target string
		argv              []string
		port              int32
		quota             int64 // µs per 100 ms
		takes             time.Duration
		body              string
		want              time.Duration // the CPU it costs
	}{
		{name: "hpa-example's index.php", ref: "registry.k8s.io/hpa-example", target: "/", port: 80,
			takes: 150 * time.Millisecond, body: "OK!", want: 150 * time.Millisecond},
		{name: "hpa-example under a 500m limit", ref: "registry.k8s.io/hpa-example", target: "/", port: 80, quota: 50000,
			takes: 300 * time.Millisecond, body: "OK!", want: 150 * time.Millisecond},
		{name: "hpa-example's 404 costs nothing", ref: "registry.k8s.io/hpa-example", target: "/nope", port: 80,
			body: "<!DOCTYPE HTML"},
		{name: "nginx's index", ref: "nginx", argv: []string{"nginx", "-g", "daemon off;"}, target: "/", port: 80,
			body: "<!DOCTYPE html>", want: staticFileCPU},
		{name: "agnhost netexec", ref: "registry.k8s.io/e2e-test-images/agnhost:2.53", argv: []string{"/agnhost", "netexec"},
			target: "/hostname", port: 8080, body: "web-0", want: goHandlerCPU},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := start(t, tt.ref, tt.argv, nil, 0)
			waitUntil(t, "listening", func() bool { return c.p.Listening(tt.port) })
			c.p.CPU().SetLimit(tt.quota, 100000)
			before := c.p.CPU().Stat().Usage
			type answer struct {
				resp *http.Response
				body string
			}
			answered := make(chan answer, 1)
			argv := tt.argv
			if argv == nil {
				argv = append(Lookup(tt.ref).Entrypoint, Lookup(tt.ref).Cmd...)
			}
			go func() {
				resp, body := do(t, c, tt.ref, argv, tt.port, "GET", tt.target)
				answered <- answer{resp, body}
			}()
			if tt.takes > 0 {
				waitUntil(t, "computing", c.clk.HasWaiters)
				c.clk.Step(tt.takes - time.Millisecond)
				select {
				case <-answered:
					t.Fatalf("answered before %v", tt.takes)
				case <-time.After(10 * time.Millisecond):
				}
				c.clk.Step(time.Millisecond)
			}
			a := <-answered
			if !strings.HasPrefix(a.body, tt.body) {
				t.Fatalf("answered %q, want %q...", a.body, tt.body)
			}
			if got, want := c.p.CPU().Stat().Usage-before, tt.want+idle(tt.takes); got != want {
				t.Fatalf("the request cost %v of CPU, want %v", got, want)
			}
		})
	}
}

// resource-consumer consumes exactly what it is asked, for as long as it
// is asked: ConsumeCPU?millicores=300&durationSec=30 is 9 CPU-seconds
// over 30 s (0.3 core), and a request above a core gets a core, as its
// consume-cpu process is one thread.
func TestResourceConsumerConsumesWhatItIsAsked(t *testing.T) {
	tests := []struct {
		millicores string
		want       time.Duration // over the 30 s
	}{
		{"300", 9 * time.Second},
		{"1500", 30 * time.Second},
	}
	for _, tt := range tests {
		c := start(t, "registry.k8s.io/e2e-test-images/resource-consumer:1.13", nil, nil, 0)
		waitUntil(t, "listening", func() bool { return c.p.Listening(8080) })
		argv := []string{"/consumer"}
		before := c.p.CPU().Stat().Usage
		resp, body := do(t, c, "registry.k8s.io/e2e-test-images/resource-consumer:1.13", argv, 8080, "POST", "/ConsumeCPU?millicores="+tt.millicores+"&durationSec=30")
		if resp.StatusCode != 200 || body != "ConsumeCPU\n"+tt.millicores+" millicores\n30 durationSec\n" {
			t.Fatalf("answered %d %q", resp.StatusCode, body)
		}
		waitUntil(t, "consuming", func() bool { return c.p.CPU().Demand() > 0 && c.clk.HasWaiters() })
		c.clk.Step(30 * time.Second)
		if got, want := c.p.CPU().Stat().Usage-before, goHandlerCPU+tt.want+idle(30*time.Second); got != want {
			t.Errorf("%s millicores for 30 s: %v of CPU, want %v", tt.millicores, got, want)
		}
		waitUntil(t, "done consuming", func() bool { return c.p.CPU().Demand() == 0 })
		before = c.p.CPU().Stat().Usage
		c.clk.Step(30 * time.Second)
		if got, want := c.p.CPU().Stat().Usage-before, idle(30*time.Second); got != want {
			t.Errorf("%s millicores, 30 s after: %v of CPU, want %v", tt.millicores, got, want)
		}
		if !strings.Contains(c.stderr.String(), "ConsumeCPU millicores: "+tt.millicores+", durationSec: 30") {
			t.Errorf("its log: %q", c.stderr.String())
		}
	}
}

// Its other endpoints: memory, a custom metric, and its errors.
func TestResourceConsumerMemoryMetricsAndErrors(t *testing.T) {
	c := start(t, "registry.k8s.io/e2e-test-images/resource-consumer:1.13", nil, nil, 0)
	waitUntil(t, "listening", func() bool { return c.p.Listening(8080) })
	argv := []string{"/consumer"}
	ask := func(method, target string, code int, want string) {
		t.Helper()
		resp, body := do(t, c, "registry.k8s.io/e2e-test-images/resource-consumer:1.13", argv, 8080, method, target)
		if resp.StatusCode != code || body != want {
			t.Fatalf("%s %s: %d %q, want %d %q", method, target, resp.StatusCode, body, code, want)
		}
	}
	ask("POST", "/ConsumeMem?megabytes=100&durationSec=10", 200, "ConsumeMem\n100 megabytes\n10 durationSec\n")
	ask("POST", "/BumpMetric?metric=QPS&delta=10&durationSec=10", 200, "BumpMetric\nQPS metric\n10 delta\n10 durationSec\n")
	waitUntil(t, "holding memory", func() bool { return c.p.MemoryUsage() == 100*mi })
	waitUntil(t, "both waiting", func() bool { return c.clk.Waiters() == 2 })
	ask("GET", "/metrics", 200, "# HELP QPS info message.\n# TYPE QPS gauge\nQPS 10.000000\n")
	c.clk.Step(10 * time.Second)
	waitUntil(t, "memory freed", func() bool { return c.p.MemoryUsage() == 0 })
	waitUntil(t, "the metric back", func() bool {
		_, body := do(t, c, "registry.k8s.io/e2e-test-images/resource-consumer:1.13", argv, 8080, "GET", "/metrics")
		return body == "# HELP QPS info message.\n# TYPE QPS gauge\nQPS 0.000000\n"
	})
	ask("GET", "/ConsumeCPU?millicores=1&durationSec=1", 400, "Bad request. Not a POST request\n")
	ask("POST", "/ConsumeCPU?millicores=1", 400, "not given function argument\n")
	ask("POST", "/ConsumeCPU?millicores=x&durationSec=1", 400, "incorrect function argument\n")
	ask("POST", "/Nope", 404, "unknown function: /Nope\n")
}

// The controller (agnhost's resource-consumer-controller, as the tests
// run it, or the image's /controller) spreads what the test asks of all
// replicas over the consumers' Service in requests of the size it is
// given.
func TestResourceConsumerControllerSpreadsTheLoad(t *testing.T) {
	const ref = "registry.k8s.io/e2e-test-images/resource-consumer:1.13"
	flags := []string{"--consumer-service-name=rc", "--consumer-service-namespace=ns", "--consumer-port=80"}
	for _, ctrl := range []struct{ ref, argv0 string }{
		{"registry.k8s.io/e2e-test-images/agnhost:2.53", "/agnhost resource-consumer-controller"},
		{ref, "/controller"},
	} {
		consumer := start(t, ref, nil, nil, 0)
		waitUntil(t, "the consumer listening", func() bool { return consumer.p.Listening(8080) })
		argv := append(strings.Fields(ctrl.argv0), flags...)
		c := start(t, ctrl.ref, argv, nil, 0)
		waitUntil(t, "the controller listening", func() bool { return c.p.Listening(8080) })
		c.p.Dial = func(_ context.Context, network, address string) (net.Conn, error) {
			if network != "tcp" || address != "rc.ns.svc.cluster.local:80" {
				return nil, fmt.Errorf("dialed %s %s", network, address)
			}
			return dial(consumer, ref, []string{"/resource-consumer"}, 8080), nil
		}
		resp, body := do(t, c, ctrl.ref, argv, 8080, "POST", "/ConsumeCPU?millicores=250&durationSec=10&requestSizeMillicores=100")
		lines := strings.Split(strings.TrimSpace(body), "\n")
		sort.Strings(lines[1:])
		want := []string{"RC manager: sending 2 requests to consume 100 millicores each and 1 request to consume 50 millicores",
			"Consumed 100 millicores", "Consumed 100 millicores", "Consumed 50 millicores"}
		if resp.StatusCode != 200 || !slices.Equal(lines, want) {
			t.Fatalf("%s answered %d %q, want %q", ctrl.argv0, resp.StatusCode, lines, want)
		}
		waitUntil(t, "the consumer using 250m", func() bool { return consumer.p.CPU().Demand() == 0.25 })
	}
}

// With a headless Service NAME-headless, the controller sends each pod
// its even share of a CPU load, straight to its container port.
func TestResourceConsumerControllerSharesCPUPerPod(t *testing.T) {
	const ref = "registry.k8s.io/e2e-test-images/resource-consumer:1.13"
	pods := map[string]*container{}
	for _, ip := range []string{"10.244.0.7", "10.244.0.8"} {
		pods[ip] = start(t, ref, nil, nil, 0)
		waitUntil(t, "a consumer listening", func() bool { return pods[ip].p.Listening(8080) })
	}
	argv := []string{"/agnhost", "resource-consumer-controller", "--consumer-service-name=rc", "--consumer-service-namespace=ns", "--consumer-port=80"}
	c := start(t, "registry.k8s.io/e2e-test-images/agnhost:2.53", argv, nil, 0)
	waitUntil(t, "the controller listening", func() bool { return c.p.Listening(8080) })
	c.p.Lookup = func(_ context.Context, q shell.DNSQuestion) (shell.DNSReply, error) {
		if q.Name != "rc-headless.ns.svc.cluster.local" || q.Type != "A" {
			return shell.DNSReply{Name: q.Name, Rcode: "NXDOMAIN"}, nil
		}
		return shell.DNSReply{Name: q.Name, Rcode: "NOERROR", Answer: []shell.DNSRecord{
			{Name: q.Name + ".", Type: "A", Data: "10.244.0.7"}, {Name: q.Name + ".", Type: "A", Data: "10.244.0.8"}}}, nil
	}
	c.p.Dial = func(_ context.Context, _, address string) (net.Conn, error) {
		host, port, _ := net.SplitHostPort(address)
		if pods[host] == nil || port != "8080" {
			return nil, fmt.Errorf("dialed %s", address)
		}
		return dial(pods[host], ref, []string{"/resource-consumer"}, 8080), nil
	}
	_, body := do(t, c, "registry.k8s.io/e2e-test-images/agnhost:2.53", argv, 8080, "POST", "/ConsumeCPU?millicores=300&durationSec=10&requestSizeMillicores=100")
	if body != "RC manager (per-pod): sending 150 millicores to each of 2 pods via headless DNS\n" {
		t.Fatalf("answered %q", body)
	}
	for ip, pod := range pods {
		waitUntil(t, ip+" using 150m", func() bool { return pod.p.CPU().Demand() == 0.15 })
	}
}

// The HPA specs' idle sidecar is a second consumer, `/consumer -port=8081`
// in Go's flag spelling, beside the first in the same pod.
func TestResourceConsumerSidecarListensOnItsPort(t *testing.T) {
	c := start(t, "registry.k8s.io/e2e-test-images/resource-consumer:1.13", []string{"/consumer", "-port=8081"}, nil, 0)
	waitUntil(t, "listening on 8081", func() bool { return c.p.Listening(8081) })
	if c.p.Listening(8080) {
		t.Fatal("the sidecar listens on 8080 too")
	}
}
