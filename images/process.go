package images

import (
	"io"

	"k8s.io/utils/clock"

	"github.com/mkube/mkube/images/shell"
)

// What the runtime gives a container's process and what it holds of it.
// On a real node containerd writes an OCI runtime spec (the process's
// args, env, user, hostname, rlimits, root and mounts) and runc starts
// the process in its namespaces; here the spec is ProcessOptions and the
// process is the shell.

// ProcessOptions is what the runtime offers a program: its filesystem
// (FS), its network (Dial, from the pod's network namespace, and Lookup,
// the nameserver of its /etc/resolv.conf), its clock, its standard
// streams, its environment and hostname, who it runs as (Identity,
// Privileged, NoNewPrivs), its memory limit, and the image's programs it
// may run besides the shell's own.
type ProcessOptions = shell.Options

// Process is a container's process, or a command exec'd beside it: Exec
// runs a command line to its exit code; Terminate is the stop signal;
// MemoryUsage, Ports and Listening are what the kernel would tell the
// runtime of it (its cgroup's memory, its sockets).
type Process = shell.Process

// NewProcess makes a process that has not run yet.
func NewProcess(o ProcessOptions) *Process { return shell.New(o) }

// Identity is who a process runs as: user, group and groups.
type Identity = shell.Identity

// How a process ends when it did not end on its own: Exec returns
// ErrKilled when its context ends (SIGKILL) and ErrOOMKilled when it used
// more memory than its limit; both exit 137.
var (
	ErrKilled    = shell.ErrKilled
	ErrOOMKilled = shell.ErrOOMKilled
)

// Terminal is a container's tty (kubectl exec -it, a Pod with tty: true):
// the pty's line discipline between the client's keys and screen and
// the process.
type Terminal = shell.Terminal

// NewTerminal starts a tty that reads keys and writes to screen.
func NewTerminal(keys io.Reader, screen io.Writer) *Terminal { return shell.NewTerminal(keys, screen) }

// CPU is a container's cgroup's CPU accounting (cpu.stat): what its
// processes used of the clock's time, capped by its CFS quota, with the
// throttled periods counted. The runtime makes one per container, gives
// it to every process of the container (ProcessOptions.CPU) and reads it
// for its stats and the container's /sys/fs/cgroup/cpu.stat.
type CPU = shell.CPU

// CPUStat is what CPU.Stat reports.
type CPUStat = shell.CPUStat

// NewCPU starts a container's CPU accounting on clk.
func NewCPU(clk clock.PassiveClock) *CPU { return shell.NewCPU(clk) }
