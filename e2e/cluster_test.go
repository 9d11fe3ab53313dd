// Package e2e starts the real mkube binaries on free ports and drives them
// through HTTP only, as a user with curl would.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// binDir holds the binaries built once for the whole package.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mkube-e2e-bin-")
	if err != nil {
		panic(err)
	}
	build := exec.Command("go", "build", "-o", dir+"/", "github.com/mkube/mkube/cmd/...")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cluster is one running mkube: an API server, a controller manager, a
// scheduler and kubelets, each a real process with its log in a file.
type cluster struct {
	t     testing.TB
	URL   string
	logs  map[string]string      // component → log file
	procs map[string]*os.Process // component → its process, for resource figures
	dir   string                 // the cluster's files: etcd's data, the nodes' pod logs
	// secure: the components talk to the secure port, each with its own
	// kubeconfig from the API server's cert dir (clusterFlags.secure);
	// the test itself still uses the plain port at URL.
	secure     bool
	securePort int
	// componentPorts are the scheduler's and the controller manager's
	// --secure-port (HTTPS: /metrics, /healthz, /readyz), a free port each
	// so that clusters run side by side; by process name.
	componentPorts map[string]int
}

// certDir is where the API server keeps the PKI and the components'
// kubeconfigs.
func (c *cluster) certDir() string { return filepath.Join(c.dir, "etcd", "pki") }

// serverFlags are how a component reaches the API server: the plain port,
// or on a secure cluster the secure port with its own kubeconfig.
func (c *cluster) serverFlags(kubeconfig string) []string {
	if c.secure {
		return []string{"--kubeconfig", filepath.Join(c.certDir(), kubeconfig+".kubeconfig")}
	}
	return []string{"--server", c.URL}
}

// freePort is a port for a process the test starts, handed out once per
// test binary from below the kernel's ephemeral range (32768-60999 on
// Linux): a port the kernel picked for port 0 and that the test then
// released could be taken, before the process binds it, by a parallel
// test's port-0 listener or by an outgoing connection's local port.
func freePort(t testing.TB) int {
	t.Helper()
	for {
		port := int(nextPort.Add(1))
		if port >= 32768 {
			t.Fatal("no free port left below the ephemeral range")
		}
		// Another program on the host may hold it: check.
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		l.Close()
		return port
	}
}

// nextPort is the last port freePort handed out; each test binary starts
// at its own offset, so e2e binaries of two checkouts rarely meet.
var nextPort atomic.Int32

func init() { nextPort.Store(int32(20000 + os.Getpid()%8000)) }

// startCluster starts the four programs with the given kubelets.
func startCluster(t testing.TB, apiserverArgs []string, nodes ...string) *cluster {
	t.Helper()
	kubelets := make([]kubeletNode, len(nodes))
	for i, n := range nodes {
		kubelets[i] = kubeletNode{name: n}
	}
	return startClusterWithNodes(t, apiserverArgs, kubelets...)
}

// kubeletNode is one kubelet of startClusterWithNodes and the extra flags
// it registers its Node with (--labels, --register-with-taints).
type kubeletNode struct {
	name  string
	flags []string
}

// startClusterWithNodes starts the four programs, with per-kubelet flags.
func startClusterWithNodes(t testing.TB, apiserverArgs []string, nodes ...kubeletNode) *cluster {
	t.Helper()
	return startClusterWith(t, clusterFlags{apiserver: apiserverArgs}, nodes...)
}

// clusterFlags are extra flags for the control plane's programs.
type clusterFlags struct {
	apiserver, controllerManager, scheduler []string
	// secure runs the components with least privilege: each on its own
	// kubeconfig over HTTPS (controller-manager.kubeconfig,
	// scheduler.kubeconfig, and each node's kubelet-<node>.kubeconfig,
	// which the API server makes with --node-kubeconfigs), judged by
	// Node,RBAC and NodeRestriction.
	secure bool
}

// startClusterWith starts the four programs with extra flags.
func startClusterWith(t testing.TB, flags clusterFlags, nodes ...kubeletNode) *cluster {
	t.Helper()
	dir := t.TempDir()
	port := freePort(t)
	c := &cluster{t: t, URL: fmt.Sprintf("http://127.0.0.1:%d", port), logs: map[string]string{}, dir: dir, secure: flags.secure}
	apiserverFlags := flags.apiserver
	if c.secure {
		names := make([]string, len(nodes))
		for i, n := range nodes {
			names[i] = n.name
		}
		apiserverFlags = append([]string{"--node-kubeconfigs", strings.Join(names, ",")}, apiserverFlags...)
	}
	c.securePort = c.startAPIServer(filepath.Join(dir, "etcd"), apiserverFlags...)
	c.waitReady()
	// The controller manager sees the nodes' disks and NFS exports where
	// the kubelets have them (startKubelet), as the PersistentVolume
	// controller needs to reclaim and provision volumes.
	// It signs approved CertificateSigningRequests with the cluster's CA,
	// as kube-controller-manager with kubeadm's flags.
	c.start("controller-manager", c.controllerManagerArgs(flags.controllerManager...)...)
	c.start("scheduler", append(c.serverFlags("scheduler"), flags.scheduler...)...)
	for _, n := range nodes {
		c.startKubelet("kubelet-"+n.name, n)
	}
	t.Cleanup(func() {
		if t.Failed() {
			c.dumpLogs()
		}
	})
	return c
}

// controllerManagerArgs are the controller manager's flags in this
// cluster, then extra.
func (c *cluster) controllerManagerArgs(extra ...string) []string {
	return slices.Concat(c.serverFlags("controller-manager"), []string{"--root-ca-file", filepath.Join(c.certDir(), "ca.crt"),
		"--cluster-signing-cert-file", filepath.Join(c.certDir(), "ca.crt"), "--cluster-signing-key-file", filepath.Join(c.certDir(), "ca.key"),
		"--node-root", filepath.Join(c.dir, "nodes"), "--nfs-root", filepath.Join(c.dir, "nfs")}, extra)
}

func (c *cluster) start(bin string, args ...string) { c.startAs(bin, bin, args...) }

// startKubelet starts a kubelet for node n under the process name given.
// All kubelets share this host: any free port for their API, loopback as
// the address the API server reaches them at, and a pod logs directory
// per node (the same one when a node's kubelet is started again), and a
// serving certificate per node, self-signed at its first start in
// DIR/kubelet-pki/NODE.
func (c *cluster) startKubelet(name string, n kubeletNode) {
	c.t.Helper()
	if c.dir == "" {
		c.dir = c.t.TempDir()
	}
	args := append(c.serverFlags("kubelet-"+n.name), "--node-name", n.name, "--cpu", "4", "--memory", "8Gi", "--port", "0", "--node-ip", "127.0.0.1",
		"--pod-logs-dir", filepath.Join(c.dir, "pod-logs", n.name),
		"--node-root", filepath.Join(c.dir, "nodes"), "--nfs-root", filepath.Join(c.dir, "nfs"),
		"--cert-dir", filepath.Join(c.dir, "kubelet-pki", n.name))
	if c.secure { // the API server's kubelet client certificate authenticates, as kubeadm sets clientCAFile
		args = append(args, "--client-ca-file", filepath.Join(c.certDir(), "ca.crt"))
	}
	c.startAs(name, "kubelet", append(args, n.flags...)...)
}

func (c *cluster) startAs(name, bin string, args ...string) {
	c.t.Helper()
	if (bin == "scheduler" || bin == "controller-manager") && !slices.Contains(args, "--secure-port") {
		// Not kube-scheduler's 10259 nor kube-controller-manager's 10257:
		// tests run several clusters on one host at once.
		port := freePort(c.t)
		args = append([]string{"--secure-port", strconv.Itoa(port)}, args...)
		if c.componentPorts == nil {
			c.componentPorts = map[string]int{}
		}
		c.componentPorts[name] = port
	}
	logPath := filepath.Join(c.t.TempDir(), name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		c.t.Fatal(err)
	}
	path := bin
	if !filepath.IsAbs(bin) { // mkube's own, built for the test run; else a tool of make tools
		path = filepath.Join(binDir, bin)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.logs[name] = logPath
	if c.procs == nil {
		c.procs = map[string]*os.Process{}
	}
	c.procs[name] = cmd.Process
	c.t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		f.Close()
	})
}

// waitReady waits up to 30 s for the API server's /readyz, and shows its
// log if it never gets there (it may have exited: a port it could not
// bind, a bad flag).
func (c *cluster) waitReady() {
	c.t.Helper()
	ready := func() (bool, string) {
		resp, err := http.Get(c.URL + "/readyz")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == 200, resp.Status
	}
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if ok, _ := ready(); ok {
			return
		}
	}
	_, state := ready()
	c.dumpLogs()
	c.t.Fatalf("not true within 30s: the API server is ready; last state: %s", state)
}

func (c *cluster) dumpLogs() {
	for name, path := range c.logs {
		data, _ := os.ReadFile(path)
		if dir := os.Getenv("MKUBE_E2E_LOGS"); dir != "" { // the whole logs, kept
			os.WriteFile(filepath.Join(dir, name+".log"), data, 0o644)
		}
		lines := strings.Split(string(data), "\n")
		if len(lines) > 60 {
			lines = lines[len(lines)-60:]
		}
		c.t.Logf("---- %s (last lines) ----\n%s", name, strings.Join(lines, "\n"))
	}
}

// do sends a request; out, if set, receives the decoded JSON body.
func (c *cluster) do(method, path, contentType string, body any, out any) int {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, _ := json.Marshal(b)
		rd = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(method, c.URL+path, rd)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			c.t.Fatalf("%s %s: decode %q: %v", method, path, data, err)
		}
	}
	return resp.StatusCode
}

// watchEvent is one line of a watch stream, with the object's essentials.
type watchEvent struct {
	Type   string
	Object struct {
		Kind     string
		Metadata struct {
			Name            string
			ResourceVersion string
		}
		Code   int
		Reason string
	}
}

// watch streams events of path (a collection URL) into a channel until ctx ends.
func (c *cluster) watch(ctx context.Context, path string) <-chan watchEvent {
	c.t.Helper()
	out, err := openWatch(ctx, c.URL+path)
	if err != nil {
		c.t.Fatal(err)
	}
	return out
}

// openWatch streams the events of url (a collection URL) into a channel,
// closed when the stream ends: ctx ends, or the server went away.
func openWatch(ctx context.Context, url string) (<-chan watchEvent, error) {
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", url+sep+"watch=true", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	out := make(chan watchEvent, 10000)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			var ev watchEvent
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				out <- ev
			}
		}
	}()
	return out, nil
}
