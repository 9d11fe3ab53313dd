// Package apiregistration declares apiregistration.k8s.io/v1 APIServices,
// kube-aggregator's record of who serves each group-version: "Local" (this
// API server) or a Service in the cluster (an aggregated API server, such
// as metrics-server for metrics.k8s.io).
//
// Kubernetes keeps them with controllers inside kube-apiserver, and so
// does mkube (Controller):
//
//   - autoregister: one Local APIService for each built-in group-version
//     the server serves (v1., v1.apps, v2.autoscaling, ...), with the
//     priorities of Kubernetes' table (priorities.go);
//   - crdregistration: one Local APIService for each group-version that
//     a CustomResourceDefinition serves, removed with the last of them;
//   - availability: the Available condition, True for a Local APIService
//     and, for one backed by a Service, True once the Service answers the
//     discovery check (GET /apis/<group>/<version>, sent by
//     apiserver/aggregator, which then proxies the group-version's
//     requests to it), checked again every 30 s.
//
// Where things live:
//
//	file             what it holds
//	apiservices.go   the APIService kind
//	validation.go    ValidateAPIService, in Kubernetes' words
//	controller.go    the Controller: autoregister and crdregistration, its queue and Run
//	priorities.go    Kubernetes' table of group and version priorities; BuiltinAPIServices
//	availability.go  availability: the Available condition and the Checker that asks a Service
package apiregistration
