package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mkube/mkube/images/lib"
)

// netexecDialTimeout is agnhost's HTTP client timeout for /dial.
const netexecDialTimeout = 5 * time.Second

// netexecDial is `agnhost netexec`'s /dial?request=R&host=H&port=P
// &protocol=http&tries=N: the pod itself GETs http://H:P/R (protocol
// udp: sends R in a datagram to H:P and reads one back), N times, and
// answers {"responses": [...]} and {"errors": [...]} as JSON.
// Kubernetes' networking e2e tests check pod-to-pod connectivity with
// it (a test pod asks its netexec to dial every endpoint), and its
// lifecycle-hook tests have the kubelet ask a netexec sidecar to reach
// the hook's handler. The connection comes from the pod, through its
// network namespace (shell.Process.Dial), so the target sees the pod's
// IP. SCTP is not simulated: it is a 400, as an unknown protocol is to
// agnhost.
func netexecDial(c Running, w http.ResponseWriter, r *http.Request) {
	p := c.Process
	q := r.URL.Query()
	host, port, request, protocol, tryParam := q.Get("host"), q.Get("port"), q.Get("request"), q.Get("protocol"), q.Get("tries")
	goLog(p, fmt.Sprintf("GET /dial?host=%s&protocol=%s&port=%s&request=%s&tries=%s", host, protocol, port, request, tryParam))
	tries := 1
	if tryParam != "" {
		n, err := strconv.Atoi(tryParam)
		if err != nil {
			http.Error(w, fmt.Sprintf("tries parameter is invalid. %v", err), http.StatusBadRequest)
			return
		}
		tries = n
	}
	if request == "" {
		http.Error(w, "request parameter not specified. <nil>", http.StatusBadRequest)
		return
	}
	var dial func(ctx context.Context, c Running, addr, request string) (string, error)
	var addr net.Addr
	var err error
	udp := false
	switch strings.ToLower(protocol) {
	case "", "http":
		dial = dialHTTP
	case "udp":
		dial, udp = dialUDP, true
	case "sctp":
		http.Error(w, fmt.Sprintf("unsupported protocol. %s (mkube's pod network carries no SCTP)", protocol), http.StatusBadRequest)
		return
	default:
		http.Error(w, fmt.Sprintf("unsupported protocol. %s", protocol), http.StatusBadRequest)
		return
	}
	// A name is resolved as the pod resolves it (its /etc/hosts and
	// nameserver), not as the node does.
	if net.ParseIP(host) == nil && host != "" {
		addrs, err := c.Process.LookupHost(r.Context(), host)
		if err != nil {
			http.Error(w, fmt.Sprintf("host and/or port param are invalid. %v", err), http.StatusBadRequest)
			return
		}
		host = addrs[0]
	}
	if udp {
		addr, err = net.ResolveUDPAddr("udp", net.JoinHostPort(host, port))
	} else {
		addr, err = net.ResolveTCPAddr("tcp", net.JoinHostPort(host, port))
	}
	if err != nil {
		http.Error(w, fmt.Sprintf("host and/or port param are invalid. %v", err), http.StatusBadRequest)
		return
	}
	var responses, errs []string
	var response string
	for range tries {
		if response, err = dial(r.Context(), c, addr.String(), request); err != nil {
			errs = append(errs, err.Error())
		} else {
			responses = append(responses, response)
		}
	}
	// As agnhost's: the responses are reported if the last try had one.
	output := map[string][]string{}
	if response != "" {
		output["responses"] = responses
	}
	if len(errs) > 0 {
		output["errors"] = errs
	}
	body, _ := json.Marshal(output)
	w.Write(body)
}

// dialHTTP GETs http://addr/request from the pod, within agnhost's
// timeout on the pod's clock.
func dialHTTP(ctx context.Context, c Running, addr, request string) (string, error) {
	p := c.Process
	ctx, cancel := clockTimeout(ctx, p, netexecDialTimeout)
	defer cancel()
	transport := lib.PodTransport(p, nil)
	defer transport.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/%s", addr, request), nil)
	if err != nil {
		return "", err
	}
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

// dialUDP sends request in one datagram to addr from the pod and reads
// one answer, waiting for it no longer than agnhost's 5 s on the pod's
// clock. Its errors are agnhost's: "reading from udp connection failed.
// err:'read udp 10.244.1.3:43567->10.244.2.5:8081: i/o timeout'".
func dialUDP(ctx context.Context, c Running, addr, request string) (string, error) {
	p := c.Process
	ctx, cancel := clockTimeout(ctx, p, netexecDialTimeout)
	defer cancel()
	conn, err := p.Connect(ctx, "udp", addr)
	if err != nil {
		return "", fmt.Errorf("udp dial failed. err:%v", err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(request)); err != nil {
		return "", fmt.Errorf("udp connection write failed. err:%v", err)
	}
	// The timeout passing is the read deadline passing.
	stop := context.AfterFunc(ctx, func() { conn.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	buf := make([]byte, 2048)
	n, err := conn.Read(buf)
	if err != nil || n == 0 {
		return "", fmt.Errorf("reading from udp connection failed. err:'%v'", err)
	}
	return string(buf[:n]), nil
}
