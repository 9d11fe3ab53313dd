package shell

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

// wget [-q] [-O FILE] [-T SEC] [--spider] [--header H] [--post-data S]
// [-U AGENT] URL is busybox's wget, the HTTP client of the busybox image
// (`wget -qO- http://10.244.1.5:8080/`). It follows redirects, refuses
// to overwrite a file it names from the URL, and fails, exit 1, with
// busybox's messages: "bad address", "can't connect to remote host",
// "server returned error: HTTP/1.1 404 Not Found", "download timed out".
func wget(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	var quiet, spider, noCheckCert bool
	var output, postData, agent string
	var headers []string
	timeout := 900 * time.Second // busybox's default
	var rawURL string
	fail := func(format string, a ...any) (int, error) {
		fmt.Fprintf(p.Stderr, "wget: "+format+"\n", a...)
		return 1, nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		next := func() (string, bool) {
			if hasValue {
				return value, true
			}
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return "", false
		}
		switch {
		case strings.HasPrefix(a, "--"):
			switch name {
			case "quiet":
				quiet = true
			case "spider":
				spider = true
			case "no-check-certificate":
				noCheckCert = true
			case "output-document", "timeout", "header", "post-data", "user-agent":
				v, ok := next()
				if !ok {
					return fail("option '%s' requires an argument", a)
				}
				switch name {
				case "output-document":
					output = v
				case "timeout":
					d, ok := seconds(v)
					if !ok {
						return fail("invalid number '%s'", v)
					}
					timeout = d
				case "header":
					headers = append(headers, v)
				case "post-data":
					postData = v
				case "user-agent":
					agent = v
				}
			default:
				return fail("unrecognized option '%s'", a)
			}
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				switch c := a[j]; c {
				case 'q':
					quiet = true
				case 'O', 'T', 'U':
					v, ok := optionValue(args, &i, j)
					if !ok {
						return fail("option requires an argument -- '%c'", c)
					}
					switch c {
					case 'O':
						output = v
					case 'U':
						agent = v
					case 'T':
						d, ok := seconds(v)
						if !ok {
							return fail("invalid number '%s'", v)
						}
						timeout = d
					}
					j = len(a)
				case 's', 'c', 'Y', 'S':
					// -s (spider's short form in busybox), -c (continue),
					// -S and -Y change nothing for a fresh fetch here
					if c == 's' {
						spider = true
					}
				default:
					return fail("invalid option -- '%c'", c)
				}
			}
		default:
			rawURL = a
		}
	}
	if rawURL == "" {
		fmt.Fprintln(p.Stderr, "BusyBox v1.37.0 multi-call binary.\n\nUsage: wget [-cqS] [--spider] [-O FILE] [-o LOGFILE] [--header STR]\n\t[--post-data STR | --post-file FILE] [-Y on/off]\n\t[-P DIR] [-U AGENT] [-T SEC] URL...")
		return 1, nil
	}
	if !strings.Contains(rawURL, "://") {
		rawURL = "http://" + rawURL
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fail("not an http or ftp url: %s", rawURL)
	}

	// The file: -O names it, else the URL's last element, as busybox.
	toStdout := output == "-"
	if output == "" {
		output = path.Base(u.Path)
		if output == "/" || output == "." || output == "" {
			output = "index.html"
		}
		if exists, _ := p.FS.Stat(output); exists && !spider {
			return fail("can't open '%s': File exists", output)
		}
	}

	ctx, expired, cancel := p.withTimeout(ctx, timeout)
	defer cancel()
	method := http.MethodGet
	var body io.Reader
	if postData != "" {
		method, body = http.MethodPost, strings.NewReader(postData)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return fail("not an http or ftp url: %s", rawURL)
	}
	if agent == "" {
		agent = "Wget"
	}
	req.Header.Set("User-Agent", agent)
	if postData != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	setHeaders(req, headers)
	// BusyBox's own TLS checks no certificate, and says so unless told
	// --no-check-certificate: https to a kubelet's self-signed port works.
	if u.Scheme == "https" && !noCheckCert {
		fmt.Fprintln(p.Stderr, "wget: note: TLS certificate validation not implemented")
	}
	transport := &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
		DialContext: func(ctx context.Context, _, address string) (net.Conn, error) {
			conn, err := p.Connect(ctx, "tcp", address)
			if err == nil && !quiet {
				fmt.Fprintf(p.Stderr, "Connecting to %s (%s)\n", address, conn.RemoteAddr())
			}
			return conn, err
		}}
	defer transport.CloseIdleConnections()
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		if ctx.Err() != nil && !expired() {
			return 137, ctx.Err()
		}
		var op *net.OpError
		switch f := classify(err); {
		case expired():
			return fail("download timed out")
		case f == unresolved:
			return fail("bad address '%s'", u.Hostname())
		case errors.As(err, &op) && op.Op == "dial":
			return fail("can't connect to remote host (%s): %s", remoteIP(err, u.Hostname()), strerror(f, err))
		}
		return fail("error getting response: Connection reset by peer")
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fail("server returned error: %s %s", resp.Proto, resp.Status)
	}
	if spider {
		return 0, nil
	}
	dst := out
	if !toStdout {
		w, err := p.FS.openWrite(output, false)
		if err != nil {
			return fail("can't open '%s': %s", output, describe(err))
		}
		dst = w
	}
	if !quiet {
		if toStdout {
			fmt.Fprintln(p.Stderr, "writing to stdout")
		} else {
			fmt.Fprintf(p.Stderr, "saving to '%s'\n", output)
		}
	}
	if _, err := io.Copy(dst, resp.Body); err != nil {
		if expired() {
			return fail("download timed out")
		}
		if ctx.Err() != nil {
			return 137, ctx.Err()
		}
		return fail("error getting response: Connection reset by peer")
	}
	if !quiet {
		if toStdout {
			fmt.Fprintln(p.Stderr, "written to stdout")
		} else {
			fmt.Fprintf(p.Stderr, "'%s' saved\n", output)
		}
	}
	return 0, nil
}
