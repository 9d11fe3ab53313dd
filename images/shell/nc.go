package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"syscall"
	"time"
)

// nc [-z] [-v] [-u] [-w SEC] HOST PORT is busybox's netcat: it
// connects, sends its standard input and prints what the server sends
// until the server closes (or, with -w, is quiet for SEC seconds after
// the input ended). -z only connects: `nc -z -w 1 10.244.1.5 80` is the
// port check of many readiness scripts; -v says "HOST (IP:PORT) open".
//
// -u is UDP: each read of the input is one datagram, each datagram
// that comes back is printed, and nothing ever closes, so only -w (or
// an ICMP port unreachable, which ends nc with status 1) ends it:
// `echo hostName | nc -u -w 1 10.244.1.5 8081` is how Kubernetes' tests
// ask agnhost netexec's UDP server for its hostname. Listening (-l) is
// not simulated: the shell's processes serve no port of their own.
func nc(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	var zero, verbose, udp bool
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
			case 'u':
				udp = true
			case 'l':
				return usage("-l: only connections out are simulated (a shell's process listens on no port)")
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

	network := "tcp"
	if udp {
		network = "udp"
	}
	dctx, expired, cancel := p.withTimeout(ctx, wait)
	conn, err := p.Connect(dctx, network, address)
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
	status := 0
	go func() {
		defer close(received)
		if !udp {
			io.Copy(out, conn)
			return
		}
		buf := make([]byte, 64<<10)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				if errors.Is(err, syscall.ECONNREFUSED) { // the port unreachable
					status = 1
				}
				return
			}
			out.Write(buf[:n])
		}
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
	return status, nil
}
