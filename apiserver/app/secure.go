package app

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/mkube/mkube/apiserver/pki"
)

// firstClusterIP is the "kubernetes" Service's address, the first of the
// service range: pods reach the API server there, so it is in the
// serving certificate.
const firstClusterIP = "10.96.0.1"

// servingHosts are the names and addresses clients dial the API server by.
func servingHosts(bind string) []string {
	hosts := []string{"localhost", "127.0.0.1", "apiserver", "kubernetes", "kubernetes.default",
		"kubernetes.default.svc", "kubernetes.default.svc.cluster.local", firstClusterIP}
	if name, err := os.Hostname(); err == nil {
		hosts = append(hosts, name)
	}
	if ip := net.ParseIP(bind); ip != nil && !ip.IsUnspecified() {
		hosts = append(hosts, bind)
	}
	return hosts
}

// secureServing makes (or reuses) the PKI in certDir and the TLS setup of
// the secure port, writes admin.kubeconfig for that port and returns its
// path, and the PKI. TLS asks for a client certificate but does not judge
// it: the authenticator does, so that a bad one is a 401 Status, as in
// kube-apiserver, not a failed handshake.
func secureServing(certDir, bind string, port int, now time.Time) (*tls.Config, string, *pki.PKI, error) {
	p, err := pki.Ensure(certDir, servingHosts(bind), now)
	if err != nil {
		return nil, "", nil, fmt.Errorf("certificates in %s: %w", certDir, err)
	}
	serving, err := tls.LoadX509KeyPair(p.Serving, filepath.Join(certDir, "apiserver.key"))
	if err != nil {
		return nil, "", nil, err
	}
	kubeconfig, err := p.WriteKubeconfig(pki.Admin, "https://"+net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, "", nil, err
	}
	// Dynamic record sizing starts each burst with small TLS records, for
	// a browser's first paint; the API server's clients read whole
	// objects, so full records save a write (and a syscall) per record.
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{serving},
		ClientAuth: tls.RequestClientCert, NextProtos: []string{"h2", "http/1.1"}, DynamicRecordSizingDisabled: true}, kubeconfig, p, nil
}

// writeComponentKubeconfigs writes the components' kubeconfigs into dir
// (the cert dir if empty), naming the API server https://endpoint
// (127.0.0.1:port if empty), with a kubelet certificate for each of the
// comma-separated nodes: what each program's --kubeconfig reads.
func writeComponentKubeconfigs(p *pki.PKI, dir, endpoint string, port int, nodes string, now time.Time) error {
	if dir == "" {
		dir = p.Dir
	}
	if endpoint == "" {
		endpoint = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	}
	var names []string
	for _, n := range strings.Split(nodes, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			return fmt.Errorf("--node-kubeconfigs: node name %q: %s", n, strings.Join(errs, "; "))
		}
		names = append(names, n)
	}
	return p.WriteComponentKubeconfigs(dir, "https://"+endpoint, names, now)
}

// advertiseAddress is the --advertise-address, or the host's first
// non-loopback IPv4 address (kube-apiserver's default), or 127.0.0.1.
func advertiseAddress(flagValue string) (netip.Addr, error) {
	if flagValue != "" {
		return netip.ParseAddr(flagValue)
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipnet, ok := a.(*net.IPNet); ok && !ipnet.IP.IsLoopback() && ipnet.IP.To4() != nil {
			ip, _ := netip.AddrFromSlice(ipnet.IP.To4())
			return ip, nil
		}
	}
	return netip.MustParseAddr("127.0.0.1"), nil
}
