package lib

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"

	"github.com/mkube/mkube/images/shell"
)

// AcceptTLS is the server's side of a TLS handshake on conn with cert,
// asking for a client certificate without requiring one: the connection
// and the certificates the client presented. A failed handshake closes
// conn (ok false).
func AcceptTLS(conn net.Conn, cert tls.Certificate) (_ net.Conn, peers []*x509.Certificate, ok bool) {
	tlsConn := tls.Server(conn, &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequestClientCert})
	if err := tlsConn.Handshake(); err != nil {
		conn.Close()
		return nil, nil, false
	}
	return tlsConn, tlsConn.ConnectionState().PeerCertificates, true
}

// LoadKeyPair is the key pair of certFile and keyFile, from the
// container's files, failing in os.ReadFile's and tls.X509KeyPair's
// words.
func LoadKeyPair(fs *shell.FS, certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := fs.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("open %s: no such file or directory", certFile)
	}
	keyPEM, err := fs.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("open %s: no such file or directory", keyFile)
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}
