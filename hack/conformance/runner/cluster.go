package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// cluster is mkube started for one run, as hack/run-local.sh starts it:
// the API server, controller manager, scheduler and one kubelet (with its
// runtime in-process) per node, on free ports, in a scratch directory.
// The components use the learner's plain port; the suite uses the
// admin's kubeconfig on the secure port, as a user of a real cluster.
type cluster struct {
	dir        string
	plain      string // http://127.0.0.1:PORT
	kubeconfig string // the admin's, https://127.0.0.1:SECURE
	procs      []*exec.Cmd
}

// startCluster starts mkube's binaries from bin with nodes kubelets,
// waits until every node is Ready and applies the add-on at addon.
func startCluster(bin, dir string, nodes int, addon string) (*cluster, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	secure, err := freePort()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	c := &cluster{dir: dir, plain: "http://127.0.0.1:" + strconv.Itoa(port),
		kubeconfig: filepath.Join(data, "pki", "admin.kubeconfig")}
	if err := c.start(bin, "apiserver", "--port", strconv.Itoa(port), "--secure-port", strconv.Itoa(secure), "--data-dir", data); err != nil {
		return nil, err
	}
	if err := c.waitFor(30*time.Second, "the API server to be ready", c.ready); err != nil {
		c.stop()
		return nil, err
	}
	roots := []string{"--node-root", filepath.Join(dir, "nodes"), "--nfs-root", filepath.Join(dir, "nfs")}
	if err := c.start(bin, "controller-manager", append([]string{"--server", c.plain, "--root-ca-file", filepath.Join(data, "pki", "ca.crt")}, roots...)...); err != nil {
		c.stop()
		return nil, err
	}
	if err := c.start(bin, "scheduler", "--server", c.plain); err != nil {
		c.stop()
		return nil, err
	}
	nodeIP := hostIP()
	for i := 1; i <= nodes; i++ {
		name := fmt.Sprintf("node%02d", i)
		args := append([]string{"--server", c.plain, "--node-name", name, "--port", "0", "--node-ip", nodeIP,
			"--pod-logs-dir", filepath.Join(dir, "pod-logs", name)}, roots...)
		if err := c.startAs("kubelet-"+name, bin, "kubelet", args...); err != nil {
			c.stop()
			return nil, err
		}
	}
	if err := c.waitFor(60*time.Second, fmt.Sprintf("%d Ready nodes", nodes), func() bool { return c.readyNodes() == nodes }); err != nil {
		c.stop()
		return nil, err
	}
	if err := c.applyAddon(addon); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// applyAddon applies the metrics-server add-on with kubectl, as a learner
// does on a new cluster (the HPA and MetricsGrabber specs read the
// metrics API), and waits until its APIService is Available. An empty
// path applies nothing.
func (c *cluster) applyAddon(path string) error {
	if path == "" {
		return nil
	}
	out, err := exec.Command("kubectl", "--kubeconfig", c.kubeconfig, "apply", "-f", path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("kubectl apply -f %s: %v: %s", path, err, out)
	}
	return c.waitFor(2*time.Minute, "the metrics API to be available", func() bool {
		out, err := exec.Command("kubectl", "--kubeconfig", c.kubeconfig, "get", "apiservice", "v1beta1.metrics.k8s.io",
			"-o", `jsonpath={.status.conditions[?(@.type=="Available")].status}`).Output()
		return err == nil && string(out) == "True"
	})
}

// hostIP is the nodes' InternalIP: the host's first non-loopback IPv4
// address, as a node's is no loopback one (the suite skips loopback node
// addresses, and its HostPort spec tells 127.0.0.1 from the node's IP),
// else 127.0.0.1. The nodes share it, each kubelet on a port of its own.
func hostIP() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipnet, ok := a.(*net.IPNet); ok && !ipnet.IP.IsLoopback() && ipnet.IP.To4() != nil {
			return ipnet.IP.String()
		}
	}
	return "127.0.0.1"
}

func (c *cluster) start(bin, name string, args ...string) error {
	return c.startAs(name, bin, name, args...)
}

// startAs starts bin/program, its output in dir/logs/name.log.
func (c *cluster) startAs(name, bin, program string, args ...string) error {
	logs := filepath.Join(c.dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(logs, name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(bin, program), args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	c.procs = append(c.procs, cmd)
	return nil
}

// stop interrupts every program, the last started first, and waits.
func (c *cluster) stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].Process.Signal(os.Interrupt)
	}
	for _, p := range c.procs {
		p.Wait()
	}
}

func (c *cluster) waitFor(timeout time.Duration, what string, ok func() bool) error {
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			return fmt.Errorf("waited %v for %s (logs in %s)", timeout, what, filepath.Join(c.dir, "logs"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}

func (c *cluster) ready() bool {
	resp, err := http.Get(c.plain + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// readyNodes counts the nodes whose Ready condition is True.
func (c *cluster) readyNodes() int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.plain+"/api/v1/nodes", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var list struct {
		Items []struct {
			Status struct {
				Conditions []struct{ Type, Status string }
			}
		}
	}
	if json.NewDecoder(resp.Body).Decode(&list) != nil {
		return 0
	}
	n := 0
	for _, node := range list.Items {
		for _, cond := range node.Status.Conditions {
			if cond.Type == "Ready" && cond.Status == "True" {
				n++
			}
		}
	}
	return n
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
