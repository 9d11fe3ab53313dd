package catalog

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
)

// redisPing is what the redis image answers on its port, as far as mkube
// simulates it: the protocol (RESP, or inline commands as `telnet`
// sends them) with PING, ECHO and QUIT, enough for a tcpSocket probe, a
// `redis-cli ping` through a port-forward and the PING a client sends
// first. Other commands get an error that says so: there is no store.
func redisPing(_ Running, _ int32, conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		args, err := readCommand(r)
		if err != nil {
			return // the client closed, or spoke something else
		}
		if len(args) == 0 {
			continue
		}
		switch cmd := strings.ToUpper(args[0]); {
		case cmd == "PING" && len(args) == 1:
			io.WriteString(conn, "+PONG\r\n")
		case cmd == "PING" && len(args) == 2, cmd == "ECHO" && len(args) == 2:
			fmt.Fprintf(conn, "$%d\r\n%s\r\n", len(args[1]), args[1])
		case cmd == "PING", cmd == "ECHO":
			fmt.Fprintf(conn, "-ERR wrong number of arguments for '%s' command\r\n", strings.ToLower(cmd))
		case cmd == "QUIT":
			io.WriteString(conn, "+OK\r\n")
			return
		default:
			fmt.Fprintf(conn, "-ERR mkube's simulated redis answers only PING, ECHO and QUIT, not '%s'\r\n", args[0])
		}
	}
}

// readCommand reads one command: a RESP array of bulk strings
// ("*1\r\n$4\r\nPING\r\n", what clients send) or an inline line of
// words ("PING\r\n").
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := readLine(r)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(line, "*") {
		return strings.Fields(line), nil
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 0 || n > 1024 {
		return nil, fmt.Errorf("bad array length %q", line)
	}
	args := make([]string, 0, n)
	for range n {
		head, err := readLine(r)
		if err != nil {
			return nil, err
		}
		size, err := strconv.Atoi(strings.TrimPrefix(head, "$"))
		if !strings.HasPrefix(head, "$") || err != nil || size < 0 || size > 1<<20 {
			return nil, fmt.Errorf("bad bulk string header %q", head)
		}
		buf := make([]byte, size+2) // and its CRLF
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		args = append(args, string(buf[:size]))
	}
	return args, nil
}

func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}
