package catalog

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// The UDP servers of agnhost's subcommands: netexec's --udp-port, which
// Kubernetes' networking tests send "hostname" to (from another pod's
// netexec /dial?protocol=udp, or `nc -u` on a node), and serve-hostname's
// --udp.

// agnhostServeDatagram answers a datagram with the UDP server of the
// subcommand the container runs.
func agnhostServeDatagram(c Running, port int32, from net.Addr, datagram []byte) [][]byte {
	switch sub, _ := agnhostCommand(c.Argv); sub {
	case "netexec":
		return netexecUDP(c, port, from, datagram)
	case "serve-hostname":
		goLog(c.Process, "UDP request from "+from.String())
		return [][]byte{[]byte(c.Process.Hostname)}
	}
	return nil
}

// netexecUDP is netexec's startUDPServer: a command per datagram,
// trimmed and matched without case ("hostName\n" is "hostname"), each
// answered with one datagram, or logged and ignored if unknown.
func netexecUDP(c Running, port int32, from net.Addr, datagram []byte) [][]byte {
	p := c.Process
	raw := strings.TrimSpace(string(datagram))
	text := strings.ToLower(raw)
	answer := func(msg, reply string) [][]byte {
		goLog(p, msg)
		return [][]byte{[]byte(reply)}
	}
	switch {
	case text == "hostname":
		return answer("Sending udp hostName response", p.Hostname)
	case strings.HasPrefix(text, "envvar "):
		_, name, _ := strings.Cut(raw, " ")
		name = strings.TrimSpace(name)
		return answer("Sending UDP envvar response for "+name, p.Getenv(name))
	case strings.HasPrefix(text, "echo "):
		_, msg, _ := strings.Cut(text, " ")
		return answer(fmt.Sprintf("Echoing %v to UDP client %s", msg, from), msg)
	case text == "clientip":
		return answer("Sending clientip back to UDP client "+from.String(), from.String())
	case text == "serverport":
		return answer("Sending server port to UDP client "+strconv.Itoa(int(port)), strconv.Itoa(int(port)))
	case text != "":
		goLog(p, fmt.Sprintf("Unknown UDP command received from %s: %v", from, text))
	}
	return nil
}
