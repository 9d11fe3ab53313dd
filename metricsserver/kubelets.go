package metricsserver

import (
	"crypto/tls"
	"net"
	"net/http"

	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
)

// KubeletClient is the client metrics-server scrapes kubelets with: the
// credentials of its API server configuration (a client certificate or
// the service account's token, which the kubelet checks for nodes/metrics),
// the CA of --kubelet-certificate-authority (else the API server's), or
// none with --kubelet-insecure-tls. It dials as cfg.Dial, if set.
func KubeletClient(cfg *rest.Config, opts Options) (*http.Client, error) {
	kc := rest.CopyConfig(cfg)
	kc.Host = ""
	switch {
	case opts.KubeletInsecureTLS:
		kc.TLSClientConfig.Insecure, kc.TLSClientConfig.CAFile, kc.TLSClientConfig.CAData = true, "", nil
	case opts.KubeletCAFile != "":
		kc.TLSClientConfig.CAFile, kc.TLSClientConfig.CAData = opts.KubeletCAFile, nil
	}
	rt, err := rest.TransportFor(kc)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: rt, Timeout: opts.KubeletRequestTimeout}, nil
}

// ServingCert is the pair of --tls-cert-file and --tls-private-key-file,
// read with readFile, or without them a self-signed pair for localhost
// and 127.0.0.1, as metrics-server makes one (kept in memory here, not
// written to --cert-dir). The APIService of its manifest skips
// verification of it (insecureSkipTLSVerify).
func ServingCert(opts Options, readFile func(string) ([]byte, error)) (tls.Certificate, error) {
	if opts.TLSCertFile != "" || opts.TLSKeyFile != "" {
		certPEM, err := readFile(opts.TLSCertFile)
		if err != nil {
			return tls.Certificate{}, err
		}
		keyPEM, err := readFile(opts.TLSKeyFile)
		if err != nil {
			return tls.Certificate{}, err
		}
		return tls.X509KeyPair(certPEM, keyPEM)
	}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("localhost", []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}
