package shell

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
)

// curlUserAgent is the curl of the agnhost and nginx images (Alpine's).
const curlUserAgent = "curl/8.12.1"

// curlRequest is what curl's options ask for.
type curlRequest struct {
	silent, showError, fail, follow, insecure, head, include, verbose bool
	output, writeOut, method, caCert                                  string
	headers                                                           []string
	data                                                              *string
	maxTime, connectTimeout                                           time.Duration
	urls                                                              []string
}

// curl [OPTIONS] URL... fetches each URL over HTTP(S), as curl 8 does,
// with what e2e tests and tutorials pass it: -s -S -f -L -k -I -i -v
// -o FILE -w FORMAT -X METHOD -H HEADER -d DATA (-d @FILE)
// -m/--max-time, --connect-timeout and --cacert FILE (the CA bundle
// that verifies the server, as an in-cluster client passes the service
// account's ca.crt), bundled as -sSfL; -g and -q
// change nothing here. Its errors are curl's, with curl's exit codes: 6
// (no such host), 7 (cannot connect), 22 (-f and an HTTP error), 28
// (timed out).
func curl(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	req, code := parseCurl(ctx, p, args)
	if code != 0 || req == nil {
		return code, nil
	}
	status := 0
	for _, u := range req.urls {
		if status = req.fetch(ctx, p, u, out); status != 0 && ctx.Err() != nil {
			return 137, ctx.Err()
		}
	}
	return status, nil
}

// parseCurl reads curl's options; a nil request with a 0 code is
// nothing to fetch (curl --help).
func parseCurl(ctx context.Context, p *Process, args []string) (*curlRequest, int) {
	r := &curlRequest{}
	usage := func(format string, a ...any) (*curlRequest, int) {
		fmt.Fprintf(p.Stderr, "curl: "+format+"\n", a...)
		fmt.Fprintln(p.Stderr, "curl: try 'curl --help' or 'curl --manual' for more information")
		return nil, 2
	}
	// flags take no value; valued ones take the rest of a bundle or the
	// next argument.
	flags := map[string]*bool{"s": &r.silent, "silent": &r.silent, "S": &r.showError, "show-error": &r.showError,
		"f": &r.fail, "fail": &r.fail, "L": &r.follow, "location": &r.follow, "k": &r.insecure, "insecure": &r.insecure,
		"I": &r.head, "head": &r.head, "i": &r.include, "include": &r.include, "v": &r.verbose, "verbose": &r.verbose,
		"g": new(bool), "globoff": new(bool), "q": new(bool), "disable": new(bool)}
	valued := map[string]string{"o": "output", "w": "write-out", "X": "request", "H": "header", "d": "data",
		"m": "max-time", "output": "output", "write-out": "write-out", "request": "request", "header": "header",
		"data": "data", "data-raw": "data", "data-binary": "data", "max-time": "max-time", "connect-timeout": "connect-timeout", "url": "url",
		"cacert": "cacert", "interface": "interface"}
	set := func(name, value string) (*curlRequest, int) {
		switch name {
		case "output":
			r.output = value
		case "write-out":
			r.writeOut = value
		case "request":
			r.method = value
		case "header":
			r.headers = append(r.headers, value)
		case "url":
			r.urls = append(r.urls, value)
		case "cacert":
			r.caCert = value
		case "interface": // the connection comes from the pod's (or node's) address anyway
		case "data":
			if file, ok := strings.CutPrefix(value, "@"); ok {
				var data []byte
				var err error
				if file == "-" {
					data, err = io.ReadAll(p.stdin(ctx))
				} else {
					data, err = p.FS.ReadFile(file)
				}
				if err != nil {
					fmt.Fprintf(p.Stderr, "Warning: Couldn't read data from file \"%s\", this makes an empty POST.\n", file)
				}
				value = string(data)
			}
			r.data = &value
		case "max-time", "connect-timeout":
			d, ok := seconds(value)
			if !ok {
				return usage("option --%s: expected a proper numerical parameter", name)
			}
			if name == "max-time" {
				r.maxTime = d
			} else {
				r.connectTimeout = d
			}
		}
		return nil, 0
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--help" || a == "-h":
			fmt.Fprintln(p.Stdout, "Usage: curl [options...] <url>")
			return nil, 0
		case strings.HasPrefix(a, "--"):
			name := a[2:]
			if b, ok := flags[name]; ok {
				*b = true
				continue
			}
			long, ok := valued[name]
			if !ok {
				return usage("option %s: is unknown", a)
			}
			if i+1 >= len(args) {
				return usage("option %s: requires parameter", a)
			}
			i++
			if _, code := set(long, args[i]); code != 0 {
				return nil, code
			}
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				letter := a[j : j+1]
				if b, ok := flags[letter]; ok {
					*b = true
					continue
				}
				long, ok := valued[letter]
				if !ok {
					return usage("option -%s: is unknown", letter)
				}
				value, ok := optionValue(args, &i, j)
				if !ok {
					return usage("option -%s: requires parameter", letter)
				}
				if _, code := set(long, value); code != 0 {
					return nil, code
				}
				break
			}
		default:
			r.urls = append(r.urls, a)
		}
	}
	if len(r.urls) == 0 {
		return usage("no URL specified")
	}
	return r, 0
}

// failed prints curl's error for code, unless -s without -S.
func (r *curlRequest) failed(p *Process, code int, format string, a ...any) int {
	if !r.silent || r.showError {
		fmt.Fprintf(p.Stderr, "curl: (%d) %s\n", code, fmt.Sprintf(format, a...))
	}
	return code
}

// fetch fetches one URL and writes what the options ask for.
func (r *curlRequest) fetch(ctx context.Context, p *Process, raw string, out io.Writer) int {
	if !strings.Contains(raw, "://") { // curl guesses http
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return r.failed(p, 3, "URL rejected: Malformed input to a URL function")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return r.failed(p, 1, "Protocol \"%s\" not supported", u.Scheme)
	}
	method := r.method
	switch {
	case method != "":
	case r.head:
		method = http.MethodHead
	case r.data != nil:
		method = http.MethodPost
	default:
		method = http.MethodGet
	}
	var body io.Reader
	if r.data != nil {
		body = strings.NewReader(*r.data)
	}
	// The clock is read before --max-time's timer starts: a timer that
	// fired first would make the elapsed time it reports too short.
	start := p.Clock.Now()
	ctx, overall, cancel := p.withTimeout(ctx, r.maxTime)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return r.failed(p, 3, "URL rejected: %v", err)
	}
	req.Header.Set("User-Agent", curlUserAgent)
	req.Header.Set("Accept", "*/*")
	if r.data != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	setHeaders(req, r.headers)

	tlsConfig := &tls.Config{InsecureSkipVerify: r.insecure}
	if r.caCert != "" {
		pem, err := p.FS.ReadFile(r.caCert)
		tlsConfig.RootCAs = x509.NewCertPool()
		if err != nil || !tlsConfig.RootCAs.AppendCertsFromPEM(pem) {
			return r.failed(p, 77, "error setting certificate file: %s", r.caCert)
		}
	}
	// The transport dials on a goroutine of its own, which may outlive
	// a cancelled Do.
	var dialed struct {
		sync.Mutex
		remote  net.Addr // once connected
		expired func() bool
	}
	dialed.expired = func() bool { return false }
	transport := &http.Transport{
		DisableKeepAlives: true,
		TLSClientConfig:   tlsConfig,
		TLSNextProto:      map[string]func(string, *tls.Conn) http.RoundTripper{}, // HTTP/1.1, as curl without --http2
		DialContext: func(ctx context.Context, _, address string) (net.Conn, error) {
			if r.verbose {
				fmt.Fprintf(p.Stderr, "*   Trying %s...\n", address)
			}
			dctx, expired, cancel := p.withTimeout(ctx, r.connectTimeout)
			defer cancel()
			dialed.Lock()
			dialed.expired = expired
			dialed.Unlock()
			conn, err := p.Connect(dctx, "tcp", address)
			if err == nil {
				dialed.Lock()
				dialed.remote = conn.RemoteAddr()
				dialed.Unlock()
				if r.verbose {
					fmt.Fprintf(p.Stderr, "* Connected to %s (%s) port %s\n", u.Hostname(), hostOf(conn.RemoteAddr()), portOf(u))
					r.printRequest(p, req)
				}
			}
			return conn, err
		},
	}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, CheckRedirect: func(_ *http.Request, via []*http.Request) error {
		if !r.follow {
			return http.ErrUseLastResponse
		}
		if len(via) > 50 {
			return errors.New("Maximum (50) redirects followed")
		}
		return nil
	}}

	var received int64
	resp, err := client.Do(req)
	code := 0
	if err == nil {
		defer resp.Body.Close()
		var head bytes.Buffer
		fmt.Fprintf(&head, "%s %s\r\n", resp.Proto, resp.Status)
		for _, name := range sortedKeys(resp.Header) {
			for _, v := range resp.Header[name] {
				fmt.Fprintf(&head, "%s: %s\r\n", name, v)
			}
		}
		head.WriteString("\r\n")
		if r.verbose {
			for _, line := range strings.SplitAfter(strings.TrimSuffix(head.String(), "\r\n"), "\r\n") {
				fmt.Fprintf(p.Stderr, "< %s", strings.ReplaceAll(line, "\r\n", "\n"))
			}
			fmt.Fprintln(p.Stderr, "<")
		}
		if r.fail && resp.StatusCode >= 400 {
			code = r.failed(p, 22, "The requested URL returned error: %d", resp.StatusCode)
		} else {
			if dst, werr := r.destination(p, out); werr != nil {
				code = r.failed(p, 23, "Failed writing body")
			} else {
				if r.include || r.head {
					dst.Write(head.Bytes())
				}
				received, err = io.Copy(dst, resp.Body)
			}
		}
	}
	dialed.Lock()
	remote, connectExpired := dialed.remote, dialed.expired
	dialed.Unlock()
	if err != nil {
		code = r.failure(p, err, u, start, received, remote == nil, overall, connectExpired)
	}
	if r.writeOut != "" {
		fmt.Fprint(out, r.expandWriteOut(resp, err, remote, received, u))
	}
	return code
}

// printRequest is -v's view of what curl sends.
func (r *curlRequest) printRequest(p *Process, req *http.Request) {
	fmt.Fprintf(p.Stderr, "> %s %s HTTP/1.1\n> Host: %s\n", req.Method, req.URL.RequestURI(), req.URL.Host)
	for _, name := range sortedKeys(req.Header) {
		fmt.Fprintf(p.Stderr, "> %s: %s\n", name, req.Header.Get(name))
	}
	fmt.Fprintln(p.Stderr, ">")
}

// failure is curl's error and exit code for a failed transfer.
func (r *curlRequest) failure(p *Process, err error, u *url.URL, start time.Time, received int64, dialing bool, overall, connectExpired func() bool) int {
	ms := p.Clock.Since(start).Milliseconds()
	switch {
	case overall():
		if dialing {
			return r.failed(p, 28, "Failed to connect to %s port %s after %d ms: Timeout was reached", u.Hostname(), portOf(u), ms)
		}
		return r.failed(p, 28, "Operation timed out after %d milliseconds with %d bytes received", ms, received)
	case connectExpired():
		return r.failed(p, 28, "Failed to connect to %s port %s after %d ms: Timeout was reached", u.Hostname(), portOf(u), ms)
	case dialing:
		switch classify(err) {
		case unresolved:
			return r.failed(p, 6, "Could not resolve host: %s", u.Hostname())
		case refused, unreachable:
			return r.failed(p, 7, "Failed to connect to %s port %s after %d ms: Couldn't connect to server", u.Hostname(), portOf(u), ms)
		case timedOut:
			return r.failed(p, 28, "Failed to connect to %s port %s after %d ms: Timeout was reached", u.Hostname(), portOf(u), ms)
		}
		return r.failed(p, 7, "Failed to connect to %s port %s after %d ms: %v", u.Hostname(), portOf(u), ms, err)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return r.failed(p, 52, "Empty reply from server")
	case strings.Contains(err.Error(), "tls:") || strings.Contains(err.Error(), "x509:"):
		if strings.Contains(err.Error(), "x509:") {
			return r.failed(p, 60, "SSL certificate problem: unable to get local issuer certificate")
		}
		return r.failed(p, 35, "TLS connect error: %v", err)
	case strings.Contains(err.Error(), "redirects followed"):
		return r.failed(p, 47, "Maximum (50) redirects followed")
	}
	return r.failed(p, 56, "Recv failure: Connection reset by peer")
}

// destination is where the body goes: -o FILE, or standard output.
func (r *curlRequest) destination(p *Process, out io.Writer) (io.Writer, error) {
	switch r.output {
	case "", "-":
		return out, nil
	case "/dev/null":
		return io.Discard, nil
	}
	return p.FS.openWrite(r.output, false)
}

// expandWriteOut is -w's FORMAT with its variables filled in.
func (r *curlRequest) expandWriteOut(resp *http.Response, err error, remote net.Addr, received int64, u *url.URL) string {
	httpCode, contentType := "000", ""
	if resp != nil && err == nil {
		httpCode, contentType = fmt.Sprintf("%03d", resp.StatusCode), resp.Header.Get("Content-Type")
	}
	remoteIP, remotePort := "", ""
	if remote != nil {
		remoteIP, remotePort, _ = net.SplitHostPort(remote.String())
	}
	return strings.NewReplacer(
		"%{http_code}", httpCode, "%{response_code}", httpCode, "%{content_type}", contentType,
		"%{remote_ip}", remoteIP, "%{remote_port}", remotePort, "%{size_download}", fmt.Sprint(received),
		"%{url_effective}", u.String(), `\n`, "\n", `\t`, "\t", `\r`, "\r",
	).Replace(r.writeOut)
}

func sortedKeys(h http.Header) []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// portOf is u's port, or its scheme's.
func portOf(u *url.URL) string {
	if port := u.Port(); port != "" {
		return port
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

func hostOf(a net.Addr) string {
	if a == nil {
		return ""
	}
	host, _, _ := net.SplitHostPort(a.String())
	return host
}
