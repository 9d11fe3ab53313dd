// Package sampleapiserver is scenery: the program of
// registry.k8s.io/e2e-test-images/sample-apiserver, Kubernetes' build of
// k8s.io/sample-apiserver for its Aggregator conformance spec (the one
// binary /sample-apiserver on Alpine, test/images/sample-apiserver). The
// catalog registers the image (catalog's testimages.go: ENTRYPOINT
// ["/sample-apiserver"], Main as its program, Serve on its ports); a
// reader of mkube's own API server's aggregation can treat it as the
// other end of the proxy.
//
// The program is a Kubernetes API server built on k8s.io/apiserver's
// generic server, for one group, wardle.example.com: Flunders, namespaced,
// in v1alpha1 and v1beta1 (preferred), and Fischers, cluster-scoped, in
// v1alpha1. Once an APIService names its Service, the kube-apiserver's
// aggregator proxies /apis/wardle.example.com/... to it. As the real one,
// it:
//
//   - serves HTTPS on --secure-port (443) with the key pair of
//     --tls-cert-file and --tls-private-key-file, or without them a
//     self-signed pair it writes under apiserver.local.config/certificates;
//   - asks the cluster's API server who sent a request and whether they
//     may (delegated authentication and authorization, auth.go), except
//     for /healthz, /readyz and /livez;
//   - serves discovery, and create, get, list, update, patch, delete and
//     deletecollection of both resources, admitting a create through its
//     NamespaceLifecycle and BanFlunder plugins (rest.go).
//
// Storage is where it differs: the real one keeps its objects in the etcd
// of --etcd-servers (the pod's other container, registry.k8s.io/etcd),
// and the catalog's etcd keeps no keys. This one keeps them in the
// container process's memory instead, one store per running container,
// lost when it stops, with resourceVersions that count up from 1 as
// etcd's revisions do. Also not simulated, and refused in words that say
// so where a client could ask: watch (405) and server-side apply (415);
// and left out: Table output, pagination, managedFields, the finalizers
// a deletion's propagationPolicy adds, admission webhooks and policies,
// API Priority and Fairness, impersonation, aggregated discovery,
// OpenAPI and /version. The audit flags of the conformance spec
// (--audit-log-path=-) write nothing, in the real one too: without
// --audit-policy-file it records no events.
//
// Where things live:
//
//	file         what it holds
//	server.go    Main, the binary: flags, the serving pair, start-up and
//	             shutdown logs; Serve, one connection (TLS, then HTTP);
//	             the handler's authentication, authorization and routing;
//	             discovery; requestInfo; API errors as Status
//	auth.go      delegated authentication (front proxy headers, client
//	             certificates, TokenReview) and authorization
//	             (SubjectAccessReview), as k8s.io/apiserver's delegating
//	             options, with their caches
//	rest.go      the wardle resources: their versions' JSON, validation,
//	             the in-memory store, and each verb's handler, with the
//	             admission plugins
//	doc.go       this map
package sampleapiserver
