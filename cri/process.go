package cri

import (
	"fmt"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// What a container's process does. No process runs yet: a started
// container describes itself in its log and then waits to be stopped,
// and a stop signal ends it at once. (Simulated processes, which exit on
// their own, come next.)

// Exit codes and reasons as a container reports them. A process killed by
// signal N exits 128+N; containerd's reason is "Completed" for 0 and
// "Error" for anything else (or "OOMKilled"), and the kubelet copies it
// into the pod's lastState.terminated.
const (
	exitCodeSIGKILL = 128 + 9 // 137
	// exitCodeStartError is what containerd records when a container
	// fails to start, with reason "StartError".
	exitCodeStartError = 128

	reasonCompleted  = "Completed"
	reasonError      = "Error"
	reasonStartError = "StartError"
)

// start makes c RUNNING and prints its description. If the log cannot be
// written, c has failed to start and is EXITED, as in containerd. Callers
// hold s.mu.
func (s *Server) start(c *container, sb *sandbox) error {
	now := s.clock.Now()
	if err := appendLog(c.logPath, now, describe(c, sb)); err != nil {
		c.state, c.finishedAt = runtimeapi.ContainerState_CONTAINER_EXITED, now.UnixNano()
		c.exitCode, c.reason, c.message = exitCodeStartError, reasonStartError, err.Error()
		return err
	}
	c.state, c.startedAt = runtimeapi.ContainerState_CONTAINER_RUNNING, now.UnixNano()
	return nil
}

// stop ends a running c as StopContainer asks. CRI's timeout is the grace
// period: containerd sends the stop signal (SIGTERM) and kills with
// SIGKILL when it runs out — and with a timeout of 0, as `crictl stop`
// sends by default, it sends SIGKILL straight away (exit 137, "Error").
// Given any grace period, as the kubelet always gives (at least 2 s), the
// container honours SIGTERM at once and exits 0 ("Completed"), the way
// nginx does, and as mkube's containers always have. Callers hold s.mu.
func (s *Server) stop(c *container, timeout int64) {
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return
	}
	if timeout <= 0 {
		s.kill(c)
		return
	}
	now := s.clock.Now()
	if err := appendLog(c.logPath, now, "received SIGTERM; exiting with code 0"); err != nil {
		s.log.Warn("container log", "id", c.id, "err", err)
	}
	s.exit(c, 0, reasonCompleted)
	s.log.Info("stopped container", "container", c.config.GetMetadata().GetName(), "id", c.id,
		"signal", "SIGTERM", "timeout", timeout, "exitCode", 0)
}

// kill ends a running c with SIGKILL: the process prints nothing more and
// exits 137. Callers hold s.mu.
func (s *Server) kill(c *container) {
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return
	}
	s.exit(c, exitCodeSIGKILL, reasonError)
	s.log.Info("killed container", "container", c.config.GetMetadata().GetName(), "id", c.id,
		"signal", "SIGKILL", "exitCode", exitCodeSIGKILL)
}

func (s *Server) exit(c *container, code int32, reason string) {
	c.state, c.finishedAt = runtimeapi.ContainerState_CONTAINER_EXITED, s.clock.Now().UnixNano()
	c.exitCode, c.reason = code, reason
}

// describe is what a started container prints: where it came from and
// what it would see, so `crictl logs` (and later `kubectl logs`) teaches
// how a container config becomes a process. Environment values are left
// out: they may come from Secrets.
func describe(c *container, sb *sandbox) string {
	md, pod := c.config.GetMetadata(), sb.config.GetMetadata()
	lines := []string{
		fmt.Sprintf("mkube container %q (attempt %d) of pod %s/%s", md.GetName(), md.GetAttempt(), pod.GetNamespace(), pod.GetName()),
		fmt.Sprintf("image: %s (%s)", c.image.ref, c.image.id),
	}
	cmd, args := c.config.GetCommand(), c.config.GetArgs()
	switch {
	case len(cmd) == 0 && len(args) == 0:
		lines = append(lines, "command: the image's default entrypoint and command")
	case len(cmd) == 0:
		lines = append(lines, "command: the image's entrypoint, with args: "+quoteArgs(args))
	default:
		lines = append(lines, "command: "+quoteArgs(append(append([]string{}, cmd...), args...)))
	}
	if wd := c.config.GetWorkingDir(); wd != "" {
		lines = append(lines, "working directory: "+wd)
	}
	var names []string
	for _, e := range c.config.GetEnvs() {
		names = append(names, e.GetKey())
	}
	if len(names) == 0 {
		names = []string{"none"}
	}
	lines = append(lines, "environment variables: "+strings.Join(names, " "))
	for _, m := range c.config.GetMounts() {
		ro := ""
		if m.GetReadonly() {
			ro = " (read-only)"
		}
		lines = append(lines, fmt.Sprintf("mount: %s <- %s%s", m.GetContainerPath(), m.GetHostPath(), ro))
	}
	lines = append(lines, "started; running until stopped")
	return strings.Join(lines, "\n")
}

// quoteArgs joins a command line, quoting the words a shell would split.
func quoteArgs(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\n\"'\\$;&|") {
			w = fmt.Sprintf("%q", w)
		}
		out[i] = w
	}
	return strings.Join(out, " ")
}
