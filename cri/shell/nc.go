package shell

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// nc [-z] [-v] [-w SEC] HOST PORT is busybox's netcat over TCP: it
// connects, sends its standard input and prints what the server sends
// until the server closes (or, with -w, is quiet for SEC seconds after
// the input ended). -z only connects: `nc -z -w 1 10.244.1.5 80` is the
// port check of many readiness scripts; -v says "HOST (IP:PORT) open".
// UDP (-u) and listening (-l) are not simulated: the pod network
// carries TCP connections only.
func nc(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	var zero, verbose bool
	var wait time.Duration
	var operands []string
	usage := func(format string, a ...any) (int, error) {
		fmt.Fprintf(p.Stderr, "nc: "+format+"\n", a...)
		return 1, nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			operands = append(operands, a)
			continue
		}
		for j := 1; j < len(a); j++ {
			switch c := a[j]; c {
			case 'z':
				zero = true
			case 'v':
				verbose = true
			case 'n': // numeric only: no name is resolved
			case 't': // TCP, netcat-openbsd's default (agnhost's nc)
			case 'w':
				v, ok := optionValue(args, &i, j)
				if !ok {
					return usage("option requires an argument -- 'w'")
				}
				d, ok := seconds(v)
				if !ok {
					return usage("invalid number '%s'", v)
				}
				wait, j = d, len(a)
			case 'u', 'l':
				return usage("-%c: only TCP connections out are simulated (mkube's pod network carries no UDP and no listener of a process)", c)
			default:
				return usage("invalid option -- '%c'", c)
			}
		}
	}
	if len(operands) != 2 {
		fmt.Fprintln(p.Stderr, "Usage: nc [OPTIONS] HOST PORT  - connect")
		return 1, nil
	}
	host := operands[0]
	port, err := strconv.Atoi(operands[1])
	if err != nil || port < 1 || port > 65535 {
		return usage("bad port '%s'", operands[1])
	}
	address := net.JoinHostPort(host, strconv.Itoa(port))

	dctx, expired, cancel := p.withTimeout(ctx, wait)
	conn, err := p.dial(dctx, address)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return 137, ctx.Err()
		}
		f := classify(err)
		if expired() {
			f = timedOut
		}
		if f == unresolved {
			return usage("bad address '%s'", host)
		}
		return usage("can't connect to remote host (%s): %s", remoteIP(err, host), strerror(f, err))
	}
	defer conn.Close()
	if verbose {
		fmt.Fprintf(p.Stderr, "%s (%s) open\n", host, conn.RemoteAddr())
	}
	if zero {
		return 0, nil
	}

	// Killing the process, or -w's quiet time after the input ended,
	// closes the connection, which ends the copies.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	// The input's reader ends with nc, so the next command reads the
	// rest of the standard input.
	sctx, stopSending := context.WithCancel(ctx)
	sent := make(chan struct{})
	defer func() { stopSending(); <-sent }()
	go func() {
		defer close(sent)
		io.Copy(conn, p.stdin(sctx))
		if cw, ok := conn.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
	}()
	received := make(chan struct{})
	go func() {
		defer close(received)
		io.Copy(out, conn)
	}()
	select {
	case <-received:
	case <-sent:
		if wait > 0 {
			select {
			case <-received:
			case <-p.Clock.After(wait):
				conn.Close()
				<-received
			}
		} else {
			<-received
		}
	}
	if ctx.Err() != nil {
		return 137, ctx.Err()
	}
	return 0, nil
}
