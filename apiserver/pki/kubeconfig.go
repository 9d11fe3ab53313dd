package pki

import (
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// WriteKubeconfig writes <id.Name>.kubeconfig into the PKI's directory: a
// kubeconfig for server (https://host:port) that trusts the CA and
// presents id's client certificate, all embedded, so the file can be
// copied anywhere. It returns the file's path.
func (p *PKI) WriteKubeconfig(id Identity, server string) (string, error) {
	return p.writeKubeconfig(p.Dir, id, server)
}

// WriteComponentKubeconfigs writes into dir what kubeadm leaves on each
// machine for its programs (scheduler.conf, controller-manager.conf,
// kubelet.conf): a kubeconfig for server per component of Components
// (controller-manager.kubeconfig, scheduler.kubeconfig,
// kubelet-fleet.kubeconfig) and per node of nodes
// (kubelet-<node>.kubeconfig, its certificate signed now if it has none),
// and the CA's certificate, ca.crt. dir may be the PKI's own directory,
// or apart from it, so that the components can be given their
// kubeconfigs without the CA's key.
func (p *PKI) WriteComponentKubeconfigs(dir, server string, nodes []string, now time.Time) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ids := append([]Identity{}, Components...)
	for _, n := range nodes {
		id := Node(n)
		if err := p.EnsureClient(id, now); err != nil {
			return err
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		if _, err := p.writeKubeconfig(dir, id, server); err != nil {
			return err
		}
	}
	if filepath.Clean(dir) == filepath.Clean(p.Dir) {
		return nil
	}
	ca, err := os.ReadFile(filepath.Join(p.Dir, "ca.crt"))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o644)
}

func (p *PKI) writeKubeconfig(dir string, id Identity, server string) (string, error) {
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
	path := filepath.Join(dir, id.Name+".kubeconfig")
	return path, clientcmd.WriteToFile(*cfg, path)
}
