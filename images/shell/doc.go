// Package shell is the simulated process of mkube's containers: a small,
// deterministic sh-like interpreter. A container's command and args (as
// Kubernetes combines them with the image's entrypoint) run here, over the
// container's own in-memory filesystem, and what they print is the
// container's log. `sh`, `bash`, `/bin/sh` and `/bin/bash` are all this
// shell.
//
// It knows what the seed's examples and Kubernetes' docs use: lists with
// `;`, newlines, `&&` and `||`; pipelines with `|` (run one stage after
// the other, run.go); `while`, `for` and `if`; `$VAR`, `${VAR}`
// and `$?`; command substitution, `$(cmd)` and `cmd` in backquotes
// (`echo "Hello from $(hostname)"`); single and double quotes and
// backslashes; `>` and `>>` into files; and the everyday programs sleep,
// exit, echo, printf, env, printenv, cat, ls, touch, rm, mkdir, test, [, [[, expr,
// true, false, date, hostname and hexdump -C, tar for kubectl cp, id
// (id.go), wc, grep, cut and awk '{print $1}' (textutils.go), sysctl and ip link
// (kernel.go), and the network clients curl, wget and nc (net.go), which
// connect from the pod's network namespace. An unknown program exits 127 with "sh: X: not found", as a
// shell would.
//
// A process may have a standard input (kubectl exec -i, a container with
// stdin: true): cat and tar read it, and sh without a script reads its
// commands from it, a line at a time, prompting on a Terminal, the tty
// line discipline of kubectl exec -it (interactive.go, tty.go).
//
// Time comes from an injected clock, so `sleep 30` takes thirty seconds
// of whatever clock the runtime gives it, and a test can step it.
package shell
