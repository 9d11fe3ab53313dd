package cri

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/images"
)

// What a container's process does. A started container runs its command
// line in the simulated shell with what its image holds, both reached
// through package images, the scenery's one door (ProcessOptions is what
// the runtime gives the process): it prints to its log, sleeps, serves,
// exits on its own with a code, or is stopped or killed. Its exit is what
// the kubelet turns into the pod's containerStatuses and restart
// decisions.

// Exit codes and reasons as a container reports them. A process killed by
// signal N exits 128+N; containerd's reason is "Completed" for 0,
// "OOMKilled" for a process the kernel's OOM killer ended, and "Error"
// for anything else, and the kubelet copies it into the pod's
// lastState.terminated.
const (
	exitCodeSIGKILL = 128 + 9 // 137
	// exitCodeStartError is what containerd records when a container
	// fails to start, with reason "StartError".
	exitCodeStartError = 128

	reasonCompleted  = "Completed"
	reasonError      = "Error"
	reasonOOMKilled  = "OOMKilled"
	reasonStartError = "StartError"
)

// process is a started container's running program.
type process struct {
	sh     *images.Process
	kill   context.CancelFunc // SIGKILL: ends Exec at once
	log    *logWriter
	attach *attachment   // its stdio as kubectl attach sees it (attach.go)
	exited chan struct{} // closed once the exit is recorded
}

// commandLine is Kubernetes' rule for what a container runs, which the
// runtime applies (containerd does it when it builds the OCI spec):
//
//	command  args   runs
//	-        -      the image's ENTRYPOINT + CMD
//	-        yes    the image's ENTRYPOINT + args
//	yes      -      command (the image's CMD is ignored)
//	yes      yes    command + args
func commandLine(img images.Image, command, args []string) []string {
	if len(command) == 0 {
		command = img.Entrypoint
		if len(args) == 0 {
			args = img.Cmd
		}
	}
	return append(slices.Clone(command), args...)
}

// start makes c RUNNING and starts its process. If it cannot start (no
// command, or its log cannot be written), c has failed to start and is
// EXITED with reason StartError, as in containerd. Callers hold s.mu.
func (s *Server) start(c *container, sb *sandbox) error {
	now := s.clock.Now()
	img := images.Lookup(c.image.ref)
	argv := commandLine(img, c.config.GetCommand(), c.config.GetArgs())
	var err error
	if len(argv) == 0 {
		err = errors.New("no command specified")
	}
	var fsys *images.FS
	if err == nil {
		fsys, err = s.containerFS(c, sb, img)
	}
	var log *logWriter
	if err == nil {
		log, err = openLog(c.logPath, s.clock)
	}
	if err != nil {
		c.state, c.finishedAt = runtimeapi.ContainerState_CONTAINER_EXITED, now.UnixNano()
		c.exitCode, c.reason, c.message = exitCodeStartError, reasonStartError, err.Error()
		s.publish(c, sb, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT)
		return err
	}
	c.state, c.startedAt = runtimeapi.ContainerState_CONTAINER_RUNNING, now.UnixNano()
	s.run(c, sb, img, argv, log, fsys)
	s.publish(c, sb, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT)
	return nil
}

// containerFS is a new instance's filesystem: its image's files, then
// its mounts over them (volumes.go).
func (s *Server) containerFS(c *container, sb *sandbox, img images.Image) (*images.FS, error) {
	fsys := images.NewFS()
	for name, data := range img.Files {
		fsys.WriteFile(name, []byte(data))
	}
	for name, data := range s.sandboxFiles(sb) {
		fsys.WriteFile(name, []byte(data))
	}
	fsys.Mount("/sys/fs/cgroup", cgroupVolume{&c.resources}, true) // cgroups.go
	if err := s.mountVolumes(fsys, c, sb); err != nil {
		return nil, err
	}
	if c.config.GetLinux().GetSecurityContext().GetReadonlyRootfs() {
		fsys.SetReadOnlyRoot() // readOnlyRootFilesystem: only the volumes are writable
	}
	return fsys, nil
}

// sandboxFiles are the files every container of sb has that are not
// its image's nor its layer's: the sandbox's /etc/hostname and
// /etc/resolv.conf (dns.go), which containerd bind-mounts into each, and
// the kernel's parameters under /proc/sys (sysctls.go).
func (s *Server) sandboxFiles(sb *sandbox) map[string]string {
	files := sysctlFiles(sb)
	files["/etc/hostname"] = hostname(sb) + "\n"
	if conf, ok := s.resolvConf(sb); ok {
		files["/etc/resolv.conf"] = string(conf)
	}
	return files
}

// run starts c's process running argv in fsys, in a goroutine that
// records its exit. Callers hold s.mu.
func (s *Server) run(c *container, sb *sandbox, img images.Image, argv []string, log *logWriter, fsys *images.FS) {
	att := newAttachment(c.config, log) // its stdio, for kubectl attach (attach.go)
	sh := images.NewProcess(images.ProcessOptions{Clock: s.clock, FS: fsys, Stdin: att.procIn, Stdout: att.procOut, Stderr: att.procErr,
		Env: environment(img, c.config, sb), Hostname: hostname(sb), Programs: img.Programs,
		MemoryLimit: c.resources.get().GetMemoryLimitInBytes(),
		CPU:         c.resources.cpu,
		Identity:    identity(c.config.GetLinux().GetSecurityContext(), fsys), // identity.go
		Privileged:  c.config.GetLinux().GetSecurityContext().GetPrivileged(),
		NoNewPrivs:  c.config.GetLinux().GetSecurityContext().GetNoNewPrivs(),
		Dial:        s.dialerOf(sb),  // network.go
		Lookup:      s.lookupOf(sb)}) // network/dns
	if !img.Known {
		// An image the catalog does not know serves the ports its pod
		// declares, as the app it stands for would.
		for _, pm := range sb.config.GetPortMappings() {
			sh.Listen(pm.GetContainerPort())
		}
	}
	ctx, kill := context.WithCancel(context.Background())
	p := &process{sh: sh, kill: kill, log: log, attach: att, exited: make(chan struct{})}
	att.closeWhen(p.exited)
	c.proc = p
	s.log.Info("running container process", "container", c.config.GetMetadata().GetName(), "id", c.id, "argv", quoteArgs(argv))
	go func() {
		code, err := sh.Exec(ctx, argv)
		s.mu.Lock()
		defer s.mu.Unlock()
		if c.proc != p || c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
			return // killed: the exit is recorded already
		}
		reason := reasonError
		switch {
		case errors.Is(err, images.ErrOOMKilled):
			reason = reasonOOMKilled
		case code == 0:
			reason = reasonCompleted
		}
		s.exit(c, int32(code), reason)
		s.log.Info("container exited", "container", c.config.GetMetadata().GetName(), "id", c.id,
			"exitCode", code, "reason", reason)
	}()
}

// environment is the process's environment as containerd builds it: a
// default PATH, HOSTNAME, the image's ENV, then what the container config
// sets, each replacing the same name in place.
func environment(img images.Image, cfg *runtimeapi.ContainerConfig, sb *sandbox) []string {
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	env = withEnv(env, "HOSTNAME="+hostname(sb))
	env = withEnv(env, img.Env...)
	for _, kv := range cfg.GetEnvs() {
		env = withEnv(env, kv.GetKey()+"="+string(kv.GetValue()))
	}
	return env
}

// withEnv sets each NAME=value of vars in env: in place if env has NAME,
// else at its end (containerd's replaceOrAppendEnvValues): the image's
// PATH replaces the default one, a pod's variable the image's.
func withEnv(env []string, vars ...string) []string {
	for _, kv := range vars {
		name, _, _ := strings.Cut(kv, "=")
		i := slices.IndexFunc(env, func(e string) bool { return strings.HasPrefix(e, name+"=") })
		if i >= 0 {
			env[i] = kv
		} else {
			env = append(env, kv)
		}
	}
	return env
}

// hostname is the pod's: the sandbox's hostname, which the kubelet sets
// to the pod's name (or spec.hostname).
func hostname(sb *sandbox) string {
	if h := sb.config.GetHostname(); h != "" {
		return h
	}
	return sb.config.GetMetadata().GetName()
}

// stop ends a running c as StopContainer asks. CRI's timeout is the grace
// period: containerd sends the stop signal (SIGTERM) and kills with
// SIGKILL when it runs out, or straight away with a timeout of 0, as
// `crictl stop` sends by default. A process that handles SIGTERM (nginx,
// redis...) exits on its own before that; a shell as PID 1 does not, so
// `sleep 3600` is killed when the grace period ends, as in a real
// container. stop waits without holding s.mu.
func (s *Server) stop(c *container, timeout int64) {
	s.mu.Lock()
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		s.mu.Unlock()
		return
	}
	if timeout <= 0 {
		s.kill(c)
		s.mu.Unlock()
		return
	}
	p := c.proc
	p.sh.Terminate()
	s.log.Info("sent SIGTERM to container", "container", c.config.GetMetadata().GetName(), "id", c.id, "timeout", timeout)
	s.mu.Unlock()
	select {
	case <-p.exited:
	case <-s.clock.After(time.Duration(timeout) * time.Second):
		s.mu.Lock()
		if c.proc == p {
			s.kill(c)
		}
		s.mu.Unlock()
	}
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

// exit records that c's process ended. Callers hold s.mu.
func (s *Server) exit(c *container, code int32, reason string) {
	c.state, c.finishedAt = runtimeapi.ContainerState_CONTAINER_EXITED, s.clock.Now().UnixNano()
	c.exitCode, c.reason = code, reason
	if c.resources.cpu != nil {
		c.resources.cpu.Stop() // its usage stays what it was, as the kubelet last saw it
	}
	if p := c.proc; p != nil {
		p.kill()
		p.log.close() // what a killed process still prints is lost
		close(p.exited)
	}
	s.publish(c, s.sandboxes[c.sandboxID], runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT)
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

// resume starts the process of a restored RUNNING container again: the
// in-process runtime died with its kubelet, and its processes with it,
// so a restored container runs its command line from the start, keeping
// its startedAt. Callers hold s.mu.
func (s *Server) resume(c *container, sb *sandbox) error {
	img := images.Lookup(c.image.ref)
	fsys, err := s.containerFS(c, sb, img)
	if err != nil {
		return err
	}
	log, err := openLog(c.logPath, s.clock)
	if err != nil {
		return err
	}
	s.run(c, sb, img, commandLine(img, c.config.GetCommand(), c.config.GetArgs()), log, fsys)
	return nil
}
