package rootcacertpublisher

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestCAToPublishIsTheRootCAFileElseTheKubeconfigsElseNone(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fileCA := write("ca.crt", "the root CA file's")
	kubeconfig := func(name string, cluster *clientcmdapi.Cluster) string {
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["c"] = cluster
		cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{}
		cfg.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
		cfg.CurrentContext = "x"
		p := filepath.Join(dir, name)
		if err := clientcmd.WriteToFile(*cfg, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	withData := kubeconfig("data.kubeconfig", &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443", CertificateAuthorityData: []byte("the kubeconfig's")})
	withFile := kubeconfig("file.kubeconfig", &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443", CertificateAuthority: write("kubeconfig-ca.crt", "the kubeconfig's file's")})

	tests := []struct {
		name                   string
		rootCAFile, kubeconfig string
		want                   string
	}{
		{"--root-ca-file is published, whatever the kubeconfig trusts", fileCA, withData, "the root CA file's"},
		{"without it, the CA data the kubeconfig trusts the API server by", "", withData, "the kubeconfig's"},
		{"or the CA file the kubeconfig names", "", withFile, "the kubeconfig's file's"},
		{"with neither (the plain port, http) there is none", "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CAToPublish(tc.rootCAFile, tc.kubeconfig)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("CA = %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := CAToPublish(filepath.Join(dir, "missing.crt"), ""); err == nil {
		t.Error("a --root-ca-file that is not there: no error")
	}
}
