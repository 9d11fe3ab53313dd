package pki

import (
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// WriteKubeconfig writes <id.Name>.kubeconfig into the PKI's directory: a
// kubeconfig for server (https://host:port) that trusts the CA and
// presents id's client certificate, all embedded, so the file can be
// copied anywhere. It returns the file's path.
func (p *PKI) WriteKubeconfig(id Identity, server string) (string, error) {
	ca, err := os.ReadFile(filepath.Join(p.Dir, "ca.crt"))
	if err != nil {
		return "", err
	}
	cert, err := os.ReadFile(filepath.Join(p.Dir, id.Name+".crt"))
	if err != nil {
		return "", err
	}
	key, err := os.ReadFile(filepath.Join(p.Dir, id.Name+".key"))
	if err != nil {
		return "", err
	}
	const cluster, context = "mkube", "mkube"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[cluster] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[id.User] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts[context] = &clientcmdapi.Context{Cluster: cluster, AuthInfo: id.User}
	cfg.CurrentContext = context
	path := filepath.Join(p.Dir, id.Name+".kubeconfig")
	return path, clientcmd.WriteToFile(*cfg, path)
}
