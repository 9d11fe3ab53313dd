package catalog

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
)

// `agnhost mtlsserver` and `agnhost mtlsclient`, the two sides of
// Kubernetes' PodCertificate spec: each pod gets its key and certificate
// from a podCertificate projection, and the signer's roots from a
// clusterTrustBundle projection. The server answers GET /spiffe-echo
// over TLS with the SPIFFE URI of the client's verified certificate; the
// client polls its --fetch-url every 10 seconds with its own
// certificate and logs the answer.

const mtlsPollInterval = 10 * time.Second

// mtlsServer checks its flags and files, as the real one does before it
// listens, and serves until stopped.
func mtlsServer(ctx context.Context, p *shell.Process, args []string) (int, error) {
	listen, creds, trust := lib.StringFlag(args, "listen", ""), lib.StringFlag(args, "server-creds", ""), lib.StringFlag(args, "spiffe-trust-bundle", "")
	if listen == "" || creds == "" || trust == "" {
		return cobraError(p, "missing required flags")
	}
	_, portText, err := net.SplitHostPort(listen)
	port, perr := strconv.Atoi(portText)
	if err != nil || perr != nil || port < 1 || port > 65535 {
		return cobraError(p, fmt.Sprintf("error while serving: while listening: listen tcp: address %s: invalid port", listen))
	}
	if _, _, err := mtlsServerConfig(p, creds, trust); err != nil {
		return cobraError(p, "error while serving: "+err.Error())
	}
	if err := lib.ListenUntilStopped(ctx, p, int32(port)); err != nil {
		return 137, err
	}
	return agnhostExitOnSignal, nil
}

// cobraError is how agnhost ends a command whose RunE failed: "Error:
// MSG" on stderr, exit 1.
func cobraError(p *shell.Process, msg string) (int, error) {
	fmt.Fprintf(p.Stderr, "Error: %s\n", msg)
	return 1, nil
}

// mtlsServerConfig reads the server's credential bundle (key and chain
// in one PEM file) and the roots it verifies clients with, as the files
// are now: a projection's rotation shows at the next connection.
func mtlsServerConfig(p *shell.Process, credsFile, trustFile string) (tls.Certificate, *x509.CertPool, error) {
	trustPEM, err := p.FS.ReadFile(trustFile)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("while reading SPIFFE trust anchors: open %s: no such file or directory", trustFile)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(trustPEM) {
		return tls.Certificate{}, nil, fmt.Errorf("failed to append client certs from PEM")
	}
	bundle, err := p.FS.ReadFile(credsFile)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("while loading server key pair: open %s: no such file or directory", credsFile)
	}
	cert, err := tls.X509KeyPair(bundle, bundle)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("while loading server key pair: %w", err)
	}
	return cert, roots, nil
}

// serveMTLS answers one connection to the mtlsserver: the TLS handshake
// (a client certificate requested, not required), then HTTP, with the
// files as they are when the client connects.
func serveMTLS(c Running, conn net.Conn, flags []string) {
	p := c.Process
	cert, roots, err := mtlsServerConfig(p, lib.StringFlag(flags, "server-creds", ""), lib.StringFlag(flags, "spiffe-trust-bundle", ""))
	if err != nil {
		conn.Close()
		return
	}
	tlsConn, peers, ok := lib.AcceptTLS(conn, cert)
	if !ok {
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /spiffe-echo", func(w http.ResponseWriter, r *http.Request) {
		deny := func(status int, msg, logged string) {
			if logged != "" {
				goLog(p, logged)
			}
			http.Error(w, msg, status)
		}
		if len(peers) == 0 {
			deny(http.StatusUnauthorized, "SPIFFE client certificate authentication required", "")
			return
		}
		intermediates := x509.NewCertPool()
		for _, ic := range peers[1:] {
			intermediates.AddCert(ic)
		}
		leaf := peers[0]
		if _, err := leaf.Verify(x509.VerifyOptions{Intermediates: intermediates, Roots: roots}); err != nil {
			deny(http.StatusUnauthorized, "SPIFFE client certificate authentication required", "Error while verifying SPIFFE client certificate: "+err.Error())
			return
		}
		if len(leaf.URIs) != 1 {
			deny(http.StatusUnauthorized, "Malformed SPIFFE certificate", fmt.Sprintf("SPIFFE client certificate did not have 1 URI SAN, count: %d", len(leaf.URIs)))
			return
		}
		io.WriteString(w, "Client Identity: "+leaf.URIs[0].String())
	})
	lib.ServeHTTP(tlsConn, mux)
}

// mtlsClient polls --fetch-url every 10 seconds of the container's clock
// until stopped, logging each answer or error.
func mtlsClient(ctx context.Context, p *shell.Process, args []string) (int, error) {
	fetchURL, trust, creds := lib.StringFlag(args, "fetch-url", ""), lib.StringFlag(args, "server-trust-bundle", ""), lib.StringFlag(args, "client-cred-bundle", "")
	if fetchURL == "" || trust == "" || creds == "" {
		return cobraError(p, "missing required flags")
	}
	if _, err := url.ParseRequestURI(fetchURL); err != nil {
		return cobraError(p, "invalid --fetch-url: "+err.Error())
	}
	for {
		select {
		case <-ctx.Done():
			return 137, ctx.Err()
		case <-p.Terminated():
			return agnhostExitOnSignal, nil
		case <-p.Clock.After(mtlsPollInterval):
		}
		body, err := mtlsPoll(ctx, p, fetchURL, trust, creds)
		if err != nil {
			lib.KlogLine(p, 'E', "client.go:72", "while sending requests to the server: "+err.Error())
			continue
		}
		goLog(p, "Got response body: "+body)
	}
}

// mtlsPoll is the client's pollOnce: the files as they are now, then a
// GET through the pod's network.
func mtlsPoll(ctx context.Context, p *shell.Process, fetchURL, trustFile, credsFile string) (string, error) {
	trustPEM, err := p.FS.ReadFile(trustFile)
	if err != nil {
		return "", fmt.Errorf("while reading service trust bundle: open %s: no such file or directory", trustFile)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(trustPEM)
	bundle, err := p.FS.ReadFile(credsFile)
	if err != nil {
		return "", fmt.Errorf("while reading client credential bundle: open %s: no such file or directory", credsFile)
	}
	cert := tls.Certificate{}
	for rest := bundle; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		switch block.Type {
		case "PRIVATE KEY":
			if cert.PrivateKey, err = x509.ParsePKCS8PrivateKey(block.Bytes); err != nil {
				return "", fmt.Errorf("while parsing private key from credential bundle: %w", err)
			}
		case "CERTIFICATE":
			cert.Certificate = append(cert.Certificate, block.Bytes)
		}
	}
	if cert.PrivateKey == nil {
		return "", fmt.Errorf("client credential bundle had no private key")
	}
	if len(cert.Certificate) == 0 {
		return "", fmt.Errorf("client credential bundle had no certificates")
	}
	ctx, cancel := clockTimeout(ctx, p, 30*time.Second)
	defer cancel()
	transport := lib.PodTransport(p, &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fetchURL, nil)
	if err != nil {
		return "", fmt.Errorf("while getting URL: %w", err)
	}
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		return "", fmt.Errorf("while getting URL: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return "", fmt.Errorf("non-2xx status %d %q", resp.StatusCode, resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("while reading body: %w", err)
	}
	return string(body), nil
}
