package catalog

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/mkube/mkube/images/lib"
)

// `agnhost porter` serves fixed answers on the ports its environment
// names, the server of Kubernetes' proxy tests: SERVE_PORT_80=foo (or
// SERVE_TCP_PORT_80=foo) answers every HTTP request on port 80 with
// "foo"; with --json-response, with {"Method":"GET","Body":"foo"}, the
// request's method beside it. SERVE_TLS_PORT_443=bar answers over HTTPS,
// with the key pair CERT_FILE and KEY_FILE name (default the image's
// localhost.crt and localhost.key, in its working directory /). (The
// real one also serves UDP and SCTP ports; those are not simulated.)

const porterTLSPrefix = "SERVE_TLS_PORT_"

var porterPrefixes = []string{"SERVE_PORT_", "SERVE_TCP_PORT_", porterTLSPrefix}

// porterPorts are the HTTP ports env asks the porter to serve.
func porterPorts(env []string) []int32 {
	var ports []int32
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		for _, prefix := range porterPrefixes {
			if n, err := strconv.ParseUint(strings.TrimPrefix(name, prefix), 10, 16); strings.HasPrefix(name, prefix) && err == nil && n > 0 && !slices.Contains(ports, int32(n)) {
				ports = append(ports, int32(n))
			}
		}
	}
	return ports
}

// servePorter answers one connection on port: over TLS if the
// environment names it a TLS port.
func servePorter(c Running, port int32, conn net.Conn, flags []string) {
	h := porter(c, port, flags)
	if c.Process.Getenv(porterTLSPrefix+strconv.Itoa(int(port))) == "" {
		lib.ServeHTTP(conn, h)
		return
	}
	file := func(env, def string) ([]byte, error) {
		name := c.Process.Getenv(env)
		if name == "" {
			name = def
		}
		return c.Process.FS.ReadFile(path.Join("/", name))
	}
	certPEM, err := file("CERT_FILE", "localhost.crt")
	keyPEM, kerr := file("KEY_FILE", "localhost.key")
	cert, cerr := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil || kerr != nil || cerr != nil {
		conn.Close() // the real one's ListenAndServeTLS failed: nothing listens
		return
	}
	lib.ServeHTTP(tls.Server(conn, &tls.Config{Certificates: []tls.Certificate{cert}}), h)
}

// porter answers on port with the value its environment gives it.
func porter(c Running, port int32, flags []string) http.Handler {
	value := ""
	for _, prefix := range porterPrefixes {
		if v := c.Process.Getenv(prefix + strconv.Itoa(int(port))); v != "" {
			value = v
		}
	}
	jsonResponse := slices.Contains(flags, "--json-response") || slices.Contains(flags, "--json-response=true")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !jsonResponse {
			io.WriteString(w, value)
			return
		}
		b, _ := json.Marshal(struct{ Method, Body string }{r.Method, value})
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	})
}
