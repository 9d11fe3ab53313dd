package shell

import (
	"context"
	"fmt"
	"io"
	"path"
	"strings"
)

// What a container asks its kernel: sysctls, and network links.

// sysctl [-n] NAME... is busybox's: the value of each kernel parameter,
// which is the file /proc/sys/<NAME with dots as slashes>; the runtime
// writes the container's (the sandbox's sysctls, or the kernel's
// defaults) there. -n prints the value alone. Setting one (-w) is for a
// privileged container only, and not simulated.
func sysctl(_ context.Context, p *Process, args []string, out io.Writer) (int, error) {
	set, names := flags(args, "naew")
	if set['w'] {
		fmt.Fprintln(p.Stderr, "sysctl: setting a key is not simulated: set it in the pod's securityContext.sysctls")
		return 1, nil
	}
	code := 0
	for _, name := range names {
		file := path.Join("/proc/sys", strings.ReplaceAll(name, ".", "/"))
		data, err := p.FS.ReadFile(file)
		if err != nil {
			fmt.Fprintf(p.Stderr, "sysctl: error: '%s' is an unknown key\n", name)
			code = 1
			continue
		}
		value := strings.TrimSuffix(string(data), "\n")
		if set['n'] {
			fmt.Fprintln(out, value)
		} else {
			fmt.Fprintf(out, "%s = %s\n", name, value)
		}
	}
	return code, nil
}

// ip link add|del|set ... changes the container's network links, which
// takes CAP_NET_ADMIN: a container that is not privileged gets the
// kernel's EPERM, as busybox's ip reports it. What a privileged one asks
// for is accepted, and nothing changes. Other ip commands are not
// simulated.
func ip(_ context.Context, p *Process, args []string, _ io.Writer) (int, error) {
	if len(args) >= 2 && (args[0] == "link" || args[0] == "l") && (args[1] == "add" || args[1] == "del" || args[1] == "delete" || args[1] == "set") {
		if !p.Privileged {
			fmt.Fprintln(p.Stderr, "ip: RTNETLINK answers: Operation not permitted")
			return 2, nil
		}
		return 0, nil
	}
	fmt.Fprintf(p.Stderr, "ip: %s: not simulated\n", strings.Join(args, " "))
	return 1, nil
}
