package catalog

import (
	"fmt"
	"io"
	"strings"

	"github.com/mkube/mkube/images/shell"
)

// agnhostDNS is agnhost's dns subcommands, with which Kubernetes' DNS
// tests read what the kubelet gave the pod:
//
//   - dns-suffix prints the search line of /etc/resolv.conf, its domains
//     comma-separated ("default.svc.cluster.local,svc.cluster.local,...");
//   - dns-server-list prints the first nameserver line's servers, the
//     same way;
//   - etc-hosts prints /etc/hosts (with one more newline: fmt.Println).
//
// A file or line that is not there makes the real binary panic: Go's
// panic message on stderr, exit code 2.
func agnhostDNS(p *shell.Process, cmd string, out io.Writer) (int, error) {
	file := "/etc/resolv.conf"
	if cmd == "etc-hosts" {
		file = "/etc/hosts"
	}
	data, err := p.FS.ReadFile(file)
	if err != nil {
		return goPanic(p, fmt.Sprintf("open %s: %s", file, shell.Errno(err).Error()))
	}
	if cmd == "etc-hosts" {
		fmt.Fprintln(out, string(data))
		return 0, nil
	}
	key := "search"
	if cmd == "dns-server-list" {
		key = "nameserver"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, key) {
			fmt.Fprintln(out, strings.Join(strings.Split(line, " ")[1:], ","))
			return 0, nil
		}
	}
	return goPanic(p, "Could not find DNS search list!")
}

// goPanic is how a Go program dies of panic(msg): the message and a
// goroutine trace on stderr, exit code 2.
func goPanic(p *shell.Process, msg string) (int, error) {
	fmt.Fprintf(p.Stderr, "panic: %s\n\ngoroutine 1 [running]:\nmain.main()\n", msg)
	return 2, nil
}
