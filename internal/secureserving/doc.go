// Package secureserving is the HTTPS port of the scheduler and the
// controller manager, as k8s.io/apiserver/pkg/server's SecureServingInfo
// with DelegatingAuthenticationOptions and DelegatingAuthorizationOptions
// give kube-scheduler (10259) and kube-controller-manager (10257):
//
//   - flags --secure-port (0 disables), --bind-address, --tls-cert-file,
//     --tls-private-key-file (a self-signed certificate made in memory at
//     start without them), --client-ca-file and
//     --authorization-always-allow-paths (/healthz,/readyz,/livez);
//   - /healthz, /livez and /readyz open to anyone; /readyz runs the
//     component's checks;
//   - /metrics, the component's own Prometheus registry, for a client the
//     API server vouches for: a client certificate signed by the client CA,
//     or a bearer token it accepts (TokenReview), then a
//     SubjectAccessReview of get on the path (RBAC's nonResourceURLs).
//
// It serves seed 000's step 1 indirectly: a learner watches the components
// that list-watch the API server, and sees them ready.
//
//	file         what it holds
//	options.go   Options: the flags, Listen (a port in use stops the component), TLSConfig, ClientCAs
//	cert.go      GivenPair (--tls-cert-file, --tls-private-key-file) and SelfSigned, the serving certificate made when none is given (the kubelet's port's too)
//	serve.go     Handler (the paths, health checks, authentication and authorization), Serve
//	start.go     NewRegistry (Go and process collectors), Start: serve in the background
//	delegate.go  Reviewer and APIServerReviewer: TokenReview and SubjectAccessReview through the API server (package delegatedauth, cached)
package secureserving
