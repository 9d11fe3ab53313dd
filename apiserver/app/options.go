package app

import (
	"log/slog"
	"time"

	"k8s.io/utils/clock"

	"github.com/mkube/mkube/apiserver/kubeletclient"
	"github.com/mkube/mkube/store"
)

// The --endpoint-reconciler-type values, kube-apiserver's (which also has
// the older master-count).
const (
	EndpointReconcilerLease = "lease"
	EndpointReconcilerNone  = "none"
)

// Options say how the API server is to run, as kube-apiserver's flags do:
// cmd/apiserver fills them from its command line, internal/testserver
// from a test's temp dir and free ports.
type Options struct {
	// PlainAddress is where the learner's plain port listens, HOST:PORT
	// (--insecure-bind-address, --port): plain HTTP, no authentication.
	// Port 0 takes a free port; "" serves no plain port.
	PlainAddress string
	// SecureAddress is where the HTTPS port listens (--bind-address,
	// --secure-port); port 0 takes a free port; "" serves no secure port,
	// and so makes no certificates and no kubernetes Service.
	SecureAddress string
	// AdvertiseAddress is the address the default/kubernetes Service's
	// Endpoints give (--advertise-address); "" is the host's first
	// non-loopback IPv4.
	AdvertiseAddress string
	// EndpointReconcilerType is how the default/kubernetes Endpoints are
	// kept (--endpoint-reconciler-type): EndpointReconcilerLease ("" too),
	// every live API server by its lease in etcd; EndpointReconcilerNone,
	// no Endpoints at all, the Service alone.
	EndpointReconcilerType string
	// ControlPlaneEndpoint is HOST:PORT of this server in the components'
	// kubeconfigs (--control-plane-endpoint); "" is 127.0.0.1:SECURE-PORT.
	ControlPlaneEndpoint string
	// CertDir keeps the CA, the certificates and admin.kubeconfig
	// (--cert-dir); "" is DataDir/pki.
	CertDir string
	// KubeconfigDir is where the components' kubeconfigs are written
	// (--kubeconfig-dir); "" is CertDir.
	KubeconfigDir string
	// NodeKubeconfigs are the comma-separated nodes to write a kubelet
	// kubeconfig for (--node-kubeconfigs).
	NodeKubeconfigs string

	// Kubelet is how the API server reaches kubelets
	// (--kubelet-client-certificate, --kubelet-client-key,
	// --kubelet-certificate-authority). Without a client certificate, a
	// server with a secure port presents its PKI's
	// apiserver-kubelet-client, as kubeadm configures kube-apiserver.
	Kubelet kubeletclient.Config

	// DataDir is the embedded etcd's directory (--data-dir).
	DataDir string
	// EtcdServers are the comma-separated URLs of an external etcd
	// (--etcd-servers); "" runs etcd embedded in DataDir.
	EtcdServers string
	// EtcdClientURL also serves the embedded etcd there, for etcdctl
	// (--etcd-client-url); EtcdAdvertiseClientURL is the URL the member
	// tells etcdctl and its peers (--etcd-advertise-client-urls).
	EtcdClientURL, EtcdAdvertiseClientURL string
	// EtcdCluster makes the embedded etcd one member of a cluster, with a
	// member beside each API server (kubeadm's stacked topology):
	// --etcd-name, --etcd-initial-cluster, --etcd-initial-cluster-state,
	// --etcd-initial-cluster-token, --etcd-listen-peer-urls,
	// --etcd-advertise-peer-urls. Zero runs a single member.
	EtcdCluster store.ClusterOptions
	// CompactionInterval is how often etcd's history is compacted
	// (--compaction-interval); 0 never.
	CompactionInterval time.Duration
	// WatchCacheSize is how many recent events each resource keeps for
	// watchers (--watch-cache-size); 0 is apiserver's default.
	WatchCacheSize int
	// StorageMediaType is the format objects are written to etcd in
	// (--storage-media-type): application/json ("", mkube's default) or
	// application/vnd.kubernetes.protobuf (Kubernetes' default).
	StorageMediaType string

	// EnableAdmissionPlugins and DisableAdmissionPlugins change the
	// default admission chain (--enable-admission-plugins,
	// --disable-admission-plugins).
	EnableAdmissionPlugins, DisableAdmissionPlugins []string
	// AuthorizationModes are the comma-separated --authorization-mode.
	AuthorizationModes string
	Authentication     AuthenticationOptions
	// Profiling serves Go's profiles at /debug/pprof/ (--profiling).
	Profiling bool

	Log *slog.Logger
	// Clock is the time of the certificates, the service-account tokens
	// and the post-start hooks' controllers; nil is the real clock.
	Clock clock.WithDelayedExecution
}
