package catalog

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/images/shell"
)

// `agnhost nettest` counts the writes of other pods and answers its
// state; its search for peers through the API server's ClusterIP finds
// no route (there is no Service proxy), retries for five minutes on the
// process's clock, then gives up as log.Fatalf does.
func TestNettestCountsWritesAndGivesUpOnTheAPIServer(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	fsys := shell.NewFS()
	fsys.WriteFile(inClusterTokenFile, []byte("token"))
	stderr := &syncBuffer{}
	noRoute := func(ctx context.Context, _, address string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: mustTCPAddr(address), Err: os.NewSyscallError("connect", syscall.EHOSTUNREACH)}
	}
	argv := []string{"/agnhost", "nettest"}
	p := shell.New(shell.Options{Clock: clk, FS: fsys, Stdout: io.Discard, Stderr: stderr, Hostname: "server",
		Env: []string{"KUBERNETES_SERVICE_HOST=10.96.0.1", "KUBERNETES_SERVICE_PORT=443"}, Programs: agnhostImage().Programs, Dial: noRoute})
	done := make(chan int, 1)
	go func() {
		code, _ := p.Exec(context.Background(), argv)
		done <- code
	}()
	retry := `Unable to get server version: Get "https://10.96.0.1:443/version?timeout=32s": dial tcp 10.96.0.1:443: connect: no route to host; retrying.`
	waitUntil(t, "the first try", func() bool { return strings.Contains(stderr.String(), retry) && p.Listening(8080) })

	c := Running{Process: p, Argv: argv}
	client := &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
		conn, server := net.Pipe()
		go agnhostServe(c, 8080, server)
		return conn, nil
	}}}
	call := func(method, path, body string) string {
		t.Helper()
		req, _ := http.NewRequest(method, "http://10.244.1.2:8080"+path, strings.NewReader(body))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := call("POST", "/write", `{"Source": "prestop"}`); got != "{\"Hostname\":\"server\"}\n" {
		t.Errorf("/write = %q", got)
	}
	call("POST", "/write", `{}`)
	want := "{\n\t\"Hostname\": \"server\",\n\t\"Sent\": null,\n\t\"Received\": {\n\t\t\"prestop\": 1\n\t},\n\t\"Errors\": [\n\t\t\"server: Got request with no source\"\n\t],\n\t\"Log\": null,\n\t\"StillContactingPeers\": true\n}"
	if got := call("GET", "/read", ""); got != want {
		t.Errorf("/read = %s, want %s", got, want)
	}
	if got := call("GET", "/status", ""); got != "running" {
		t.Errorf("/status = %q, want running", got)
	}

	for i := 0; len(done) == 0; i++ {
		if i > 100 {
			t.Fatal("nettest never gave up")
		}
		tries := strings.Count(stderr.String(), "retrying")
		waitUntil(t, "a retry's wait", clk.HasWaiters)
		clk.Step(nettestRetryInterval)
		waitUntil(t, "the next try", func() bool { return len(done) > 0 || strings.Count(stderr.String(), "retrying") > tries })
	}
	if code := <-done; code != 1 || !strings.Contains(stderr.String(), "Unable to contact Kubernetes: Get \"https://10.96.0.1:443/version?timeout=32s\": dial tcp 10.96.0.1:443: connect: no route to host") {
		t.Errorf("exit %d, log:\n%s", code, stderr.String())
	}
}

func mustTCPAddr(address string) net.Addr {
	a, _ := net.ResolveTCPAddr("tcp", address)
	return a
}
