package metricsserver

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
)

// Options are metrics-server v0.8.0's flags that mkube's honours, with
// its defaults (cmd/metrics-server/app/options).
type Options struct {
	// MetricResolution is how often every kubelet is scraped (60s in the
	// code; the shipped manifests say 15s, the maintainers' minimum).
	MetricResolution time.Duration
	SecurePort       int
	CertDir          string // where a self-signed serving pair would be written; mkube keeps it in memory
	TLSCertFile      string
	TLSKeyFile       string
	Kubeconfig       string // "" is the in-cluster configuration

	KubeletInsecureTLS           bool
	KubeletPreferredAddressTypes []corev1.NodeAddressType
	KubeletUseNodeStatusPort     bool
	KubeletPort                  int
	KubeletCAFile                string
	KubeletRequestTimeout        time.Duration

	AuthenticationTolerateLookupFailure bool

	// Verbosity is klog's -v: 6 or more logs each scrape round at debug
	// level, with how long it took (the other logging flags are ignored).
	Verbosity int
}

// debugVerbosity is the -v from which the rounds are logged.
const debugVerbosity = 6

// LogLevel is the level of logging.New that Verbosity asks for.
func (o Options) LogLevel() string {
	if o.Verbosity >= debugVerbosity {
		return "debug"
	}
	return "info"
}

// minResolution is the floor metrics-server's validation puts on
// --metric-resolution.
const minResolution = 10 * time.Second

// defaultAddressTypes is --kubelet-preferred-address-types' default.
var defaultAddressTypes = []string{"Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP"}

// ParseFlags reads metrics-server's command line. Flags of the real one
// that mkube has no use for (logging, profiling, audit) are accepted and
// ignored, so that its manifests run unchanged.
func ParseFlags(args []string) (Options, error) {
	fs := pflag.NewFlagSet("metrics-server", pflag.ContinueOnError)
	fs.ParseErrorsWhitelist.UnknownFlags = true
	var o Options
	var addressTypes []string
	fs.DurationVar(&o.MetricResolution, "metric-resolution", 60*time.Second, "The resolution at which metrics-server will retain metrics, must set value at least 10s.")
	fs.IntVar(&o.SecurePort, "secure-port", 10250, "The port on which to serve HTTPS with authentication and authorization.")
	fs.StringVar(&o.CertDir, "cert-dir", "apiserver.local.config/certificates", "The directory where the TLS certs are located.")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", "", "File containing the default x509 Certificate for HTTPS.")
	fs.StringVar(&o.TLSKeyFile, "tls-private-key-file", "", "File containing the default x509 private key matching --tls-cert-file.")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "The path to the kubeconfig used to connect to the Kubernetes API server and the Kubelets (defaults to in-cluster config)")
	fs.BoolVar(&o.KubeletInsecureTLS, "kubelet-insecure-tls", false, "Do not verify CA of serving certificates presented by Kubelets.  For testing purposes only.")
	fs.StringSliceVar(&addressTypes, "kubelet-preferred-address-types", defaultAddressTypes, "The priority of node address types to use when determining which address to use to connect to a particular node")
	fs.BoolVar(&o.KubeletUseNodeStatusPort, "kubelet-use-node-status-port", false, "Use the port in the node status. Takes precedence over --kubelet-port flag.")
	fs.IntVar(&o.KubeletPort, "kubelet-port", 10250, "The port to use to connect to Kubelets.")
	fs.StringVar(&o.KubeletCAFile, "kubelet-certificate-authority", "", "Path to the CA to use to validate the Kubelet's serving certificates.")
	fs.DurationVar(&o.KubeletRequestTimeout, "kubelet-request-timeout", 10*time.Second, "The length of time to wait before giving up on a single request to Kubelet. Non-zero values should contain a corresponding time unit (e.g. 1s, 2m, 3h).")
	fs.IntVarP(&o.Verbosity, "v", "v", 0, "number for the log level verbosity")
	fs.BoolVar(&o.AuthenticationTolerateLookupFailure, "authentication-tolerate-lookup-failure", false, "If false, failures to look up missing authentication configuration from the cluster are not considered fatal.")
	if err := fs.Parse(args); err != nil {
		return Options{}, err
	}
	for _, t := range addressTypes {
		o.KubeletPreferredAddressTypes = append(o.KubeletPreferredAddressTypes, corev1.NodeAddressType(strings.TrimSpace(t)))
	}
	// Validate's checks, in its words.
	if o.MetricResolution < minResolution {
		return Options{}, fmt.Errorf("Metric-resolution should be a time duration at least 10s, but value %v provided", o.MetricResolution)
	}
	if o.MetricResolution <= o.KubeletRequestTimeout {
		return Options{}, fmt.Errorf("metric-resolution should be larger than kubelet-request-timeout")
	}
	return o, nil
}
