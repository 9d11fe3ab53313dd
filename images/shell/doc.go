// Package shell is scenery: the simulated process of mkube's containers,
// a small, deterministic sh-like interpreter with busybox's everyday
// programs. A container's command and args (as Kubernetes combines them
// with the image's entrypoint) run here, over the container's own
// in-memory filesystem, and what they print is the container's log.
// `sh`, `bash`, `/bin/sh` and `/bin/bash` are all this shell. The runtime
// reaches it through package images, which names what crosses.
//
// It knows what the seed's examples and Kubernetes' docs use: lists with
// `;`, newlines, `&&` and `||`; pipelines with `|` (run one stage after
// the other); `while`, `for` and `if`; `$VAR`, `${VAR}` and `$?`; command
// substitution, `$(cmd)` and `cmd` in backquotes (`echo "Hello from
// $(hostname)"`); single and double quotes and backslashes; `>` and `>>`
// into files. An unknown program exits 127 with "sh: X: not found", as a
// shell would.
//
// A process may have a standard input (kubectl exec -i, a container with
// stdin: true): cat and tar read it, and sh without a script reads its
// commands from it, a line at a time, prompting on a Terminal, the tty
// line discipline of kubectl exec -it. Time comes from an injected clock,
// so `sleep 30` takes thirty seconds of whatever clock the runtime gives
// it, and a test can step it.
//
// Where things live:
//
//	file            what it holds
//	run.go          Process and Options, New, Exec: the interpreter's
//	                loop over the parsed script, pipelines, variables,
//	                Terminate (SIGTERM) and how a process is killed
//	lexer.go        words and tokens: quotes, backslashes, $(...)
//	parser.go       the grammar (lists, &&, ||, |, while, for, if) into nodes
//	expand.go       expansion: $VAR, ${VAR}, $?, command substitution,
//	                field splitting
//	interactive.go  sh reading its commands from stdin, with prompts and
//	                Ctrl-C; bash; busybox's ash
//	tty.go          Terminal: the pty line discipline of kubectl exec -it
//	programs.go     Program, the table of the shell's own programs, and
//	                sh, sleep, exit, echo, printf, env, printenv, cat, ls,
//	                touch, rm, mkdir, test and [, date, hostname
//	lookpath.go     LookPath: whether the container has a program, as
//	                exec(2) asks before it runs one
//	resources.go    what a process holds: memory (UseMemory, the OOM kill
//	                above its limit) and the TCP and UDP ports it listens on
//	cpu.go          CPU, its cgroup's CPU accounting on the clock (the
//	                quota, throttled periods); pace, which makes a loop
//	                that never blocks a busy core; Spin and Compute
//	hogs.go         yes, md5sum, sha256sum, and the endless devices
//	                (/dev/zero, /dev/urandom) that keep a core busy
//	id.go           Identity, who a process runs as, and id
//	fs.go           FS: the container's in-memory filesystem, its files,
//	                its read-only root, its writable layer's size
//	mounts.go       Volume and Mount: what a mount is to the FS
//	stat.go         FileInfo: what stat(2) and statfs(2) say (modes,
//	                owners, filesystems' magic numbers), Errno
//	mount.go        mount: the container's mount table
//	mvdd.go         mv and dd
//	tar.go          tar, what kubectl cp runs
//	hexdump.go      hexdump -C
//	head.go         head
//	tail.go         tail, and tail -f on the process's clock
//	seq.go          seq
//	expr.go         expr, and [[ as busybox's ash has it
//	textutils.go    wc, grep, cut and a small awk
//	kernel.go       sysctl and ip link: what a container asks its kernel
//	net.go          Connect, the container's network clients' dial through
//	                Process.Dial, with their timeouts and error messages
//	curl.go         curl
//	wget.go         busybox's wget
//	nc.go           busybox's nc, over TCP and UDP
//	dns.go          DNSQuestion, DNSReply, DNSRecord: what a process asks
//	                its nameserver (Process.Lookup), and /etc/hosts
//	nslookup.go     busybox's nslookup
//	dig.go          dig and getent hosts
//	doc.go          this map
package shell
