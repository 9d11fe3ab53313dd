package catalog

import (
	"fmt"
	"net"
	"strings"
	"testing"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/images/shell"
)

// netexec's UDP server answers its commands, each in one datagram, and
// logs what agnhost logs; serve-hostname --udp answers anything with the
// hostname.
func TestAgnhostAnswersDatagrams(t *testing.T) {
	from := &net.UDPAddr{IP: net.IPv4(10, 244, 1, 2), Port: 40000}
	for _, tc := range []struct {
		argv     []string
		datagram string
		answers  []string
		log      string
	}{
		{[]string{"/agnhost", "netexec", "--udp-port=8081"}, "hostName\n", []string{"server"}, "Sending udp hostName response"},
		{[]string{"/agnhost", "netexec"}, "echo Hello", []string{"hello"}, "Echoing hello to UDP client 10.244.1.2:40000"}, // lower-cased, as agnhost does
		{[]string{"/agnhost", "netexec"}, "clientip", []string{"10.244.1.2:40000"}, "Sending clientip back to UDP client 10.244.1.2:40000"},
		{[]string{"/agnhost", "netexec"}, "envvar NODE_NAME", []string{"node01"}, "Sending UDP envvar response for NODE_NAME"},
		{[]string{"/agnhost", "netexec"}, "serverport", []string{"8081"}, "Sending server port to UDP client 8081"},
		{[]string{"/agnhost", "netexec"}, "what", nil, "Unknown UDP command received from 10.244.1.2:40000: what"},
		{[]string{"/agnhost", "netexec"}, "  ", nil, ""},
		{[]string{"/agnhost", "serve-hostname", "--udp", "--http=false"}, "x", []string{"server"}, "UDP request from 10.244.1.2:40000"},
		{[]string{"/agnhost", "pause"}, "hostname", nil, ""},
	} {
		var stderr strings.Builder
		p := shell.New(shell.Options{Clock: clocktesting.NewFakeClock(epoch), FS: shell.NewFS(), Stderr: &stderr, Hostname: "server",
			Env: []string{"NODE_NAME=node01"}})
		got := agnhostServeDatagram(Running{Process: p, Argv: tc.argv}, 8081, from, []byte(tc.datagram))
		var answers []string
		for _, a := range got {
			answers = append(answers, string(a))
		}
		if strings.Join(answers, "|") != strings.Join(tc.answers, "|") || !strings.Contains(stderr.String(), tc.log) || (tc.log == "" && stderr.Len() > 0) {
			t.Errorf("%v <- %q: answered %q, logged %q; want %q, %q", tc.argv[1:], tc.datagram, answers, stderr.String(), tc.answers, tc.log)
		}
	}
}

// serve-hostname refuses --udp beside its default --http, as agnhost's
// log.Fatalf does, and with --http=false binds the UDP port only.
func TestServeHostnameModes(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		tcp, udp  bool
		exitsWith int
	}{
		{args: []string{"serve-hostname"}, tcp: true},
		{args: []string{"serve-hostname", "--udp", "--http=false"}, udp: true},
		{args: []string{"serve-hostname", "--udp", "--tcp", "--http=false"}, tcp: true, udp: true},
		{args: []string{"serve-hostname", "--udp"}, exitsWith: 1},
	} {
		var stderr strings.Builder
		p := shell.New(shell.Options{Clock: clocktesting.NewFakeClock(epoch), FS: shell.NewFS(), Stderr: &stderr})
		done := make(chan int, 1)
		go func() { code, _ := agnhost(t.Context(), p, tc.args, &stderr); done <- code }()
		if tc.exitsWith != 0 {
			if code := <-done; code != tc.exitsWith || !strings.Contains(stderr.String(), "Can't server TCP/UDP mode and HTTP mode at the same time") {
				t.Errorf("%v: exit %d, %q", tc.args, code, stderr.String())
			}
			continue
		}
		waitUntil(t, fmt.Sprintf("%v to listen on TCP %v, UDP %v", tc.args, tc.tcp, tc.udp), func() bool {
			return p.Listening(9376) == tc.tcp && p.ListeningUDP(9376) == tc.udp
		})
		// Once it has ended, what it bound is all it ever bound.
		p.Terminate()
		<-done
		if p.Listening(9376) != tc.tcp || p.ListeningUDP(9376) != tc.udp {
			t.Errorf("%v: TCP %v, UDP %v; want %v, %v", tc.args, p.Listening(9376), p.ListeningUDP(9376), tc.tcp, tc.udp)
		}
	}
}
