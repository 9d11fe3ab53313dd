package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
)

// agnhostImage is registry.k8s.io/e2e-test-images/agnhost, Kubernetes'
// own test image ("agnostic host"): one Go binary, /agnhost, whose
// subcommand is its first argument (ENTRYPOINT ["/agnhost"], CMD
// ["pause"]), on Alpine, and a link to it, /agnhost-2. The docs'
// liveness HTTP probe example runs `agnhost liveness`; Services and DNS
// examples run `agnhost netexec`; Kubernetes' own gRPC probe tests run
// `agnhost grpc-health-checking` (agnhost_grpc.go), its volume tests
// `agnhost mounttest` (agnhost_mounttest.go), its PreStop test `agnhost
// nettest` (agnhost_nettest.go) and its [sig-node]
// Containers tests `agnhost entrypoint-tester`, its admission webhook
// tests `agnhost webhook` (agnhost_webhook.go), its proxy tests `agnhost
// porter` (agnhost_porter.go), its HPA tests `agnhost
// resource-consumer-controller` (consumerctrl.go). mkube simulates these
// and pause.
func agnhostImage() Image {
	img := alpineImage()
	img.Entrypoint, img.Cmd = []string{"/agnhost"}, []string{"pause"}
	img.Ports = []int32{80, 5000, 8080, 8081, 9376}
	img.Programs = map[string]shell.Program{"agnhost": agnhost, "agnhost-2": agnhost}
	img.Serve = agnhostServe
	img.ServeDatagram = agnhostServeDatagram // agnhost_udp.go
	// The porter's test certificate and key, at / as the image's
	// Dockerfile ADDs them: Kubernetes' StatefulSet specs probe readiness with GET
	// /localhost.crt on test-webserver, and break the probe by moving it.
	img.Files["/localhost.crt"] = agnhostLocalhostCert
	img.Files["/localhost.key"] = agnhostLocalhostKey // the porter's TLS ports serve with it (agnhost_porter.go)
	return img
}

// agnhostLocalhostCert is test/images/agnhost/porter/localhost.crt.
const agnhostLocalhostCert = `-----BEGIN CERTIFICATE-----
MIIDGTCCAgGgAwIBAgIRAOAAu25xDsyahNZBSXsUWhswDQYJKoZIhvcNAQELBQAw
EjEQMA4GA1UEChMHQWNtZSBDbzAgFw03MDAxMDEwMDAwMDBaGA8yMDg0MDEyOTE2
MDAwMFowEjEQMA4GA1UEChMHQWNtZSBDbzCCASIwDQYJKoZIhvcNAQEBBQADggEP
ADCCAQoCggEBAJ3bom8WHGFTGbEse2k6bhAQxjnxJvl03+DngrnrbTUXu6zw1k/b
nk11ZHfIZPpnGoySEWYLqHBiRiMvGwRgGAu3Grtf3mfeInjs1aeXFepaXc7KRm4b
z/fw3ABwvJQ9rJw9+Xb8zZqBUpoLZzjjUDTk22pNAS9XMjRSOUtLzPEYH5fL61Ev
J7FD7twinaUbZAUQvg1nsLELt87t+bo964p6p+z77g6TBa6PPezVndzmR3F0VPHV
RLPOd9gqwboFchho3z68ZNb4rnKg1fybuaOPXmwBKDRkaQMAzlnDVe246rx6O6wg
bJKvxaXviejcKMPuZ0EDjxzoWHjnh6ooiOUCAwEAAaNoMGYwDgYDVR0PAQH/BAQD
AgKkMBMGA1UdJQQMMAoGCCsGAQUFBwMBMA8GA1UdEwEB/wQFMAMBAf8wLgYDVR0R
BCcwJYILZXhhbXBsZS5jb22HBH8AAAGHEAAAAAAAAAAAAAAAAAAAAAEwDQYJKoZI
hvcNAQELBQADggEBAGXwn/vvQA0HDbW8WnTAWpvzAfaO6j6wAsDw6sMtcQDovyuk
Q3FCkZJBQ8a1mClBGXveWaDr3bU833IVQIBTvsLmLmQ9t2YrrtbEWyfgszqGK4C7
kIbyUXe7EFiJWP7A0WqwiHtOMbk8j848/CmiKI4D5p+YgXVgurP1IQ5t79Q/ZDyD
EJt+HtJvrCo9ZHacmC865eoJZG6sG2Ul64IItRYDZbr55UKViJ8r81Q67nNCv/8D
f4/K2f+miPVaTMLAll6zCT78I+3iSPPO3yCmL/2Udp4a10Jqrfv+hbf8t4DUcqlz
4XFrUHspRDZcGXFILnAsNOpfK7UmUU0wkbFghkI=
-----END CERTIFICATE-----
`

// agnhostLocalhostKey is test/images/agnhost/porter/localhost.key, the
// test certificate's key, public as the image is.
const agnhostLocalhostKey = `-----BEGIN RSA PRIVATE KEY-----
MIIEogIBAAKCAQEAnduibxYcYVMZsSx7aTpuEBDGOfEm+XTf4OeCuettNRe7rPDW
T9ueTXVkd8hk+mcajJIRZguocGJGIy8bBGAYC7cau1/eZ94ieOzVp5cV6lpdzspG
bhvP9/DcAHC8lD2snD35dvzNmoFSmgtnOONQNOTbak0BL1cyNFI5S0vM8Rgfl8vr
US8nsUPu3CKdpRtkBRC+DWewsQu3zu35uj3rinqn7PvuDpMFro897NWd3OZHcXRU
8dVEs8532CrBugVyGGjfPrxk1viucqDV/Ju5o49ebAEoNGRpAwDOWcNV7bjqvHo7
rCBskq/Fpe+J6Nwow+5nQQOPHOhYeOeHqiiI5QIDAQABAoIBAG1wRmWTQ6upjAdL
2mcyjflvV6315NpOz6NBfVzdvcFwKbmU4k9M56u1tihg8riy4DISViOT83uudgeQ
cb+Pyzvb/plmtm72DpodP2ZHlXb6nUxu6XMOrxiqkCtx/Rscwt0zDg8S5ou2GokX
XMGQvhtdikxhBHBImFKzqmrsKzH9O3oalpXCHTIHd2aDMkmrMbdjS+SSPBl6yjoz
9abnaztO4b0k76Un/648z17Z9R+OvqUvWLCxCL8XBfGd5kEIS3XLB2NlItKpsMPw
BTbYp45NaPiQOlgcNeeLZxPatSZ8WUB/28dvWzdGc2n/ybZFZlKxG0IvmjBwI97a
vkMSl8UCgYEA0WNFh9jpz3nKngbrOHx3vy6HkI7jots3kW8Lcml1uRInOOG6nerl
m0SSP/tBm4vMK0lzwlDfaTPP6UqvHnB4KI9dg3PvuDTskxC1MrmE/ZXspUHNFlCa
T5UZgXwd6KUv0bc+93KIAY/QiriYmE0DeK6vU+YDBgA4pqcywyotK4sCgYEAwP+/
OBajqNJqspiKo6UveKCHo0+L6+rrQiE3wAKH37I901NFQLBzKBtXGB+DhdrqQuYh
V+DfiXktkf3fqSz4lK5eomIrw+jxPVfgIDHjPUSJoya8sxPUv5E5Vu7dv6EcinE1
fssMGDzs4lcV2GT3bng5T9bgK1rjc191iCOva08CgYBy9Flb946FxYujrpC89jiX
0WfDyW7YHhon0hsquRNUg87cv7DAuhFMaR0R21NtnhZ9PVo8OEIvc66VmdcCkySk
v/DLFn9pVkT7iJSyQH/u6Lx/Dd0WfzH4txbFq+qPqwDR1hTPrSVWFiqbvjSoiL97
JgxDt2e5h62ScQDBfQpHeQKBgHZocdjniuE4t117WROtdMJ9OrpnQ2Eqb8vStXGI
G/SSVnwgyow1tXEV1QlnzDmDZdZFeo9/16VwQxUevOn+PUR69nSJ5m/7qoYIM+mM
se4U7py6V2tG72/YmWVMh5/aKLiHXFq+GF2Gg48Z/r0UtPmBqSfinQX8bS+LkYBE
5IrhAoGAOfnnAOAjSqKTZF5L7CJJHBYYowtcdgKdBfELWP+eWRgXPWS7sWuAE670
STDfr0KxnkrMOGv0SPpN7qVh9zPrFtfXzLkj67g7ydxUIN55cgDoPFLpCVRX87HU
nbVwcbxVjeBqQ1CyN329adNI1LsnPqy59LzBxDM/JWa47A6Y7Vc=
-----END RSA PRIVATE KEY-----
`

// agnhostExitOnSignal is how the binary ends on SIGTERM. pause handles
// it with os.Exit(2); the servers do not handle it, and Go's runtime,
// which then re-raises it to die of it, finds that the kernel does not
// kill PID 1 with a signal's default action, and exits 2 instead.
const agnhostExitOnSignal = 2

// agnhost runs a subcommand until it is stopped, as cobra dispatches
// the real binary's.
func agnhost(ctx context.Context, p *shell.Process, args []string, out io.Writer) (int, error) {
	if len(args) == 0 {
		fmt.Fprint(out, "Usage:\n  agnhost [command]\n\nUse \"agnhost [command] --help\" for more information about a command.\n")
		return 0, nil
	}
	var ports []int32
	switch args[0] {
	case "liveness": // prints nothing; serves /healthz on 8080
		ports = []int32{8080}
	case "netexec":
		port, udpPort := lib.IntFlag(args[1:], "http-port", 8080), lib.IntFlag(args[1:], "udp-port", 8081)
		goLog(p, fmt.Sprintf("Started HTTP server on port %d", port))
		if udpPort != -1 {
			// startUDPServer logs its (empty) bind address and port.
			goLog(p, fmt.Sprintf("Started UDP server on port  %d", udpPort))
			p.ListenUDP(int32(udpPort))
		}
		ports = []int32{int32(port)}
	case "grpc-health-checking":
		return grpcHealthChecking(ctx, p, args[1:])
	case "test-service-account-issuer-discovery": // the OIDC discovery spec's (agnhost_issuer.go)
		return issuerDiscovery(ctx, p, args[1:])
	case "mtlsserver": // the PodCertificate spec's server and client (agnhost_mtls.go)
		return mtlsServer(ctx, p, args[1:])
	case "mtlsclient":
		return mtlsClient(ctx, p, args[1:])
	case "guestbook": // the kubectl tests' guestbook, primary, replica or frontend (agnhost_guestbook.go)
		return guestbook(ctx, p, args[1:])
	case "nettest": // a state that test pods write to (agnhost_nettest.go)
		return nettest(ctx, p, args[1:])
	case "mounttest":
		return mounttest(ctx, p, args[1:], out) // agnhost_mounttest.go
	case "entrypoint-tester":
		return entrypointTester(p, args, out)
	case "logs-generator":
		return logsGenerator(ctx, p, args[1:]) // agnhost_logsgen.go
	case "dns-suffix", "dns-server-list", "etc-hosts":
		return agnhostDNS(p, args[0], out) // agnhost_dns.go
	case "test-webserver": // a file server of the container's "/"
		ports = []int32{int32(lib.IntFlag(args[1:], "port", 80))}
	case "webhook", "crd-conversion-webhook": // the admission and conversion webhooks of Kubernetes' tests, over HTTPS (agnhost_webhook.go, agnhost_crdconvert.go)
		port, exit, ok := webhookStart(p, args[1:])
		if !ok {
			return exit, nil
		}
		ports = []int32{port}
	case "serve-hostname": // answers its hostname (the pod's name) over HTTP, or raw over TCP or UDP
		port := int32(lib.IntFlag(args[1:], "port", 9376))
		tcp, udp := lib.BoolFlag(args[1:], "tcp", false), lib.BoolFlag(args[1:], "udp", false)
		if lib.BoolFlag(args[1:], "http", true) && (tcp || udp) {
			goLog(p, "Can't server TCP/UDP mode and HTTP mode at the same time") // its log.Fatalf
			return 1, nil
		}
		if udp {
			p.ListenUDP(port)
		}
		if !udp || tcp {
			ports = []int32{port}
		}
		goLog(p, fmt.Sprintf("Serving on port %d.", port))
	case "porter": // serves each SERVE_PORT_<n>'s value over HTTP on port n (agnhost_porter.go)
		ports = porterPorts(p.Environ())
	case "resource-consumer-controller": // the HPA tests' fan-out to resource consumers (consumerctrl.go)
		ports = []int32{int32(lib.IntFlag(args[1:], "port", 8080))}
	case "pause":
		fmt.Fprintln(out, "Paused")
	default:
		fmt.Fprintf(p.Stderr, "Error: unknown command %q for \"agnhost\"\nRun 'agnhost --help' for usage.\n", args[0])
		return 1, nil
	}
	if err := lib.ListenUntilStopped(ctx, p, ports...); err != nil {
		return 137, err
	}
	return agnhostExitOnSignal, nil
}

// entrypointTester is `agnhost entrypoint-tester`: it prints the whole
// command line it was run with, os.Args as Go's %v prints a []string
// ("[/agnhost-2 entrypoint-tester override arguments]"), and exits 0.
// The name it was called by is part of it, which is how Kubernetes'
// tests tell an overridden ENTRYPOINT (/agnhost-2) from the image's.
// (cobra would refuse a flag among the arguments; that is not simulated.)
func entrypointTester(p *shell.Process, args []string, out io.Writer) (int, error) {
	fmt.Fprintf(out, "%v\n", append([]string{p.Arg0()}, args...))
	return 0, nil
}

// goLog is a line of Go's standard logger, on stderr: "2026/12/01
// 14:00:00 message", in the container's time zone (UTC).
func goLog(p *shell.Process, msg string) {
	fmt.Fprintf(p.Stderr, "%s %s\n", p.Clock.Now().UTC().Format("2006/01/02 15:04:05"), msg)
}

// splitCommand finds a program, by its base name, in the container's
// command line, also inside `sh -c "..."`, and returns its arguments;
// ok is false if it is not there.
func splitCommand(argv []string, program string) (args []string, ok bool) {
	words := argv
	if len(argv) == 3 && (path.Base(argv[0]) == "sh" || path.Base(argv[0]) == "bash") && argv[1] == "-c" {
		words = strings.Fields(argv[2])
	}
	for i, w := range words {
		if path.Base(w) == program {
			return words[i+1:], true
		}
	}
	return nil, false
}

// agnhostCommand finds the subcommand and its flags in the container's
// command line: after /agnhost, also inside `sh -c "..."`.
func agnhostCommand(argv []string) (string, []string) {
	for _, name := range []string{"agnhost", "agnhost-2"} {
		if args, ok := splitCommand(argv, name); ok && len(args) > 0 {
			return args[0], args[1:]
		}
	}
	return "", nil
}

// agnhostServe answers a connection with the server of the subcommand
// the container runs.
func agnhostServe(c Running, port int32, conn net.Conn) {
	switch sub, flags := agnhostCommand(c.Argv); sub {
	case "liveness":
		lib.ServeHTTP(conn, lib.Logged(c.Process, "", livenessMux(c), nil))
	case "netexec":
		lib.ServeHTTP(conn, lib.Logged(c.Process, "", withCPU(c.Process, goHandlerCPU, netexecMux(c, lib.IntFlag(flags, "udp-port", 8081) != -1)), nil))
	case "grpc-health-checking":
		grpcHealthServe(c, port, conn, flags)
	case "nettest":
		lib.ServeHTTP(conn, nettestOf(c).mux())
	case "guestbook":
		lib.ServeHTTP(conn, guestbookOf(c).mux(c))
	case "mtlsserver":
		serveMTLS(c, conn, flags)
	case "test-webserver":
		lib.ServeHTTP(conn, testWebserver(c.Process.FS))
	case "webhook":
		serveWebhook(c, conn, flags)
	case "crd-conversion-webhook":
		serveCRDConversion(c, conn, flags)
	case "porter":
		servePorter(c, port, conn, flags)
	case "resource-consumer-controller":
		lib.ServeHTTP(conn, controllerHandler(c, flags))
	case "serve-hostname":
		if lib.BoolFlag(flags, "tcp", false) { // raw: the hostname, then close
			goLog(c.Process, "TCP request from "+conn.RemoteAddr().String())
			io.WriteString(conn, c.Process.Hostname)
			conn.Close()
			return
		}
		lib.ServeHTTP(conn, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			goLog(c.Process, "HTTP request from "+r.RemoteAddr)
			io.WriteString(w, c.Process.Hostname)
		}))
	default:
		conn.Close()
	}
}

// livenessMux is `agnhost liveness`: "a simple server that is alive for
// 10 seconds, then reports unhealthy for the rest of its (hopefully)
// short existence". /healthz answers 200 "ok" while the container has
// run 10 s or less, then 500 "error: <seconds>"; /started says for how
// long it has run. The 10 s are on the runtime's clock, from the
// container's start.
func livenessMux(c Running) http.Handler {
	since := func() time.Duration { return c.Process.Clock.Since(c.Started) }
	mux := http.NewServeMux()
	mux.HandleFunc("/started", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, since().String())
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if d := since(); d.Seconds() > 10 {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "error: %v", d.Seconds())
			return
		}
		io.WriteString(w, "ok")
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("loc"), http.StatusFound)
	})
	return mux
}

// netexecMux is `agnhost netexec`'s HTTP server, which logs each request
// on stderr with Go's logger. Its /healthz is 200 once its UDP server
// has started (never, with --udp-port=-1: 412). /dial connects out from
// the pod (agnhost_dial.go). The endpoints that end the process or take
// a file (/exit, /shutdown, /upload) are not simulated and say so.
func netexecMux(c Running, udp bool) http.Handler {
	p := c.Process
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		goLog(p, "GET /")
		fmt.Fprintf(w, "NOW: %v", p.Clock.Now())
	})
	mux.HandleFunc("/clientip", func(w http.ResponseWriter, r *http.Request) {
		goLog(p, "GET /clientip")
		io.WriteString(w, r.RemoteAddr)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		msg, code := r.FormValue("msg"), r.FormValue("code")
		goLog(p, fmt.Sprintf("GET /echo?msg=%s&code=%s", msg, code))
		if code != "" {
			n, err := strconv.Atoi(code)
			if err != nil {
				fmt.Fprintf(w, "argument 'code' must be an integer or empty, got %q\n", code)
				return
			}
			w.WriteHeader(n)
		}
		io.WriteString(w, msg)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		goLog(p, "GET /healthz")
		if !udp {
			w.WriteHeader(http.StatusPreconditionFailed)
		}
	})
	hostname := func(w http.ResponseWriter, r *http.Request) {
		goLog(p, "GET "+r.URL.Path)
		io.WriteString(w, p.Hostname)
	}
	mux.HandleFunc("/hostname", hostname)
	mux.HandleFunc("/hostName", hostname)
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		location, code := r.FormValue("location"), r.FormValue("code")
		goLog(p, fmt.Sprintf("%s /redirect?msg=%s&code=%s", r.Method, location, code))
		n := http.StatusFound
		if code != "" {
			var err error
			if n, err = strconv.Atoi(code); err != nil {
				fmt.Fprintf(w, "argument 'code' must be an integer or empty, got %q\n", code)
				return
			}
		}
		http.Redirect(w, r, location, n)
	})
	mux.HandleFunc("/shell", func(w http.ResponseWriter, r *http.Request) { netexecShell(c, w, r) })
	mux.HandleFunc("/dial", func(w http.ResponseWriter, r *http.Request) { netexecDial(c, w, r) })
	for _, route := range []string{"/exit", "/shutdown", "/upload"} {
		mux.HandleFunc(route, func(w http.ResponseWriter, r *http.Request) {
			goLog(p, "GET "+route)
			http.Error(w, "mkube does not simulate netexec's "+route, http.StatusNotImplemented)
		})
	}
	return mux
}

// netexecShell runs ?cmd= (or ?shellCommand=) with /bin/sh -c in the
// container, beside its main process as `kubectl exec` would (its files,
// environment and programs), and answers its combined output and error
// as JSON: {"output": "..."} or, for a failed command,
// {"error": "exit status 1", "output": "..."}.
func netexecShell(c Running, w http.ResponseWriter, r *http.Request) {
	cmd := r.FormValue("shellCommand")
	if cmd == "" {
		cmd = r.FormValue("cmd")
	}
	p := c.Process
	goLog(p, "GET /shell?cmd="+cmd)
	var out bytes.Buffer
	sh := shell.New(shell.Options{Clock: p.Clock, FS: p.FS, Stdout: &out, Stderr: &out, Env: c.Env,
		Hostname: p.Hostname, Programs: agnhostImage().Programs})
	code, err := sh.Exec(r.Context(), []string{"/bin/sh", "-c", cmd})
	result := map[string]string{}
	if out.Len() > 0 {
		result["output"] = out.String()
	}
	switch {
	case err != nil:
		result["error"] = "signal: killed"
	case code != 0:
		result["error"] = fmt.Sprintf("exit status %d", code)
	}
	goLog(p, fmt.Sprintf("Output: %s", result)) // map[error:... output:...], as the real one logs
	data, _ := json.Marshal(result)
	w.Write(data)
}

// testWebserver is `agnhost test-webserver`: Go's http.FileServer of the
// container's "/", with the CORS headers the real one adds: a file's
// bytes, a directory's listing (after a redirect to its trailing slash),
// "404 page not found" for what is not there.
func testWebserver(fs *shell.FS) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "private")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Allow-Credentials", "true")
		w.Header().Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		w.Header().Set("Access-Control-Allow-Headers", "DNT,X-Mx-ReqToken,Keep-Alive,User-Agent,X-Requested-With,Cache-Control,Content-Type")
		name := path.Clean("/" + r.URL.Path)
		exists, isDir := fs.Stat(name)
		switch {
		case !exists:
			http.Error(w, "404 page not found", http.StatusNotFound)
		case isDir && !strings.HasSuffix(r.URL.Path, "/"):
			http.Redirect(w, r, path.Base(name)+"/", http.StatusMovedPermanently)
		case isDir:
			entries, _ := fs.List(name)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, "<!doctype html>\n<meta name=\"viewport\" content=\"width=device-width\">\n<pre>\n")
			for _, e := range entries {
				if _, dir := fs.Stat(path.Join(name, e)); dir {
					e += "/"
				}
				fmt.Fprintf(w, "<a href=\"%s\">%s</a>\n", e, e)
			}
			io.WriteString(w, "</pre>\n")
		default:
			data, err := fs.ReadFile(name)
			if err != nil {
				http.Error(w, "404 page not found", http.StatusNotFound)
				return
			}
			w.Write(data)
		}
	})
}
