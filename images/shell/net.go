package shell

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// The network clients of a container: curl (curl.go), busybox's wget
// (wget.go) and nc (nc.go). They connect through Process.Dial, the
// container's network namespace, which the runtime's pod network gives:
// to the pod's own localhost, to pods on the node and, by the pod
// network's routes, to pods on other nodes. Their timeouts run on
// the process's clock, and their messages are the real programs' own.

// Connect connects to "host:port" over network ("tcp", "udp") from the
// container, through Dial. Without a network (no Dial: only a loopback
// device) it fails as connect(2) does there: "dial tcp
// 10.244.1.5:80: connect: network is unreachable".
func (p *Process) Connect(ctx context.Context, network, address string) (net.Conn, error) {
	if p.Dial == nil {
		var addr net.Addr
		if ap, err := netip.ParseAddrPort(address); err == nil {
			addr = &net.TCPAddr{IP: ap.Addr().AsSlice(), Port: int(ap.Port())}
		}
		return nil, &net.OpError{Op: "dial", Net: network, Addr: addr, Err: os.NewSyscallError("connect", syscall.ENETUNREACH)}
	}
	return p.Dial(ctx, network, address)
}

// withTimeout is ctx, cancelled after d of the process's clock (d <= 0:
// never); expired says whether the timeout, not ctx, ended it.
func (p *Process) withTimeout(ctx context.Context, d time.Duration) (_ context.Context, expired func() bool, cancel context.CancelFunc) {
	ctx, cancel = context.WithCancel(ctx)
	var fired atomic.Bool
	if d > 0 {
		t := p.Clock.NewTimer(d)
		go func() {
			select {
			case <-t.C():
				fired.Store(true)
				cancel()
			case <-ctx.Done():
				t.Stop()
			}
		}()
	}
	return ctx, fired.Load, cancel
}

// dialFailure is how a connection failed, as the clients tell it apart.
type dialFailure int

const (
	otherFailure dialFailure = iota
	unresolved               // a name: there is no cluster DNS yet
	refused                  // nothing listens on the port
	unreachable              // no pod has the IP
	timedOut
)

func classify(err error) dialFailure {
	var dns *net.DNSError
	var nerr net.Error
	switch {
	case errors.As(err, &dns):
		return unresolved
	case errors.Is(err, syscall.ECONNREFUSED):
		return refused
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return unreachable
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.As(err, &nerr) && nerr.Timeout():
		return timedOut
	}
	return otherFailure
}

// strerror is the C library's text for how a connection failed, which
// busybox prints.
func strerror(f dialFailure, err error) string {
	switch f {
	case refused:
		return "Connection refused"
	case unreachable:
		return "No route to host"
	case timedOut:
		return "Connection timed out"
	}
	return err.Error()
}

// remoteIP is the address a failed connection was to, as busybox
// prints it once it has resolved the name, else host.
func remoteIP(err error, host string) string {
	var op *net.OpError
	if errors.As(err, &op) {
		if addr, ok := op.Addr.(*net.TCPAddr); ok {
			return addr.IP.String()
		}
	}
	return host
}

// seconds parses a timeout option's value: whole or fractional seconds.
func seconds(s string) (time.Duration, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1e9 {
		return 0, false
	}
	return time.Duration(f * float64(time.Second)), true
}

// optionValue is the value of the short option at args[*i][j]: the rest
// of its bundle (-O-, -w1), else the next argument, which it takes; ok
// is false if there is none.
func optionValue(args []string, i *int, j int) (value string, ok bool) {
	if v := args[*i][j+1:]; v != "" {
		return v, true
	}
	if *i+1 >= len(args) {
		return "", false
	}
	*i++
	return args[*i], true
}

// setHeaders sets each "Name: value" of -H and --header on req.
func setHeaders(req *http.Request, headers []string) {
	for _, h := range headers {
		if name, value, ok := strings.Cut(h, ":"); ok {
			req.Header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
		}
	}
}
