// Package networking declares networking.k8s.io/v1:
//
//   - Ingresses, HTTP routes from outside the cluster (a host and a path)
//     to a Service's port, and IngressClasses, which name the controller
//     that implements them. mkube runs no ingress controller: it stores
//     and validates both, and the DefaultIngressClass admission plugin
//     (apiserver/admission) gives a new Ingress that names no class the
//     one marked ingressclass.kubernetes.io/is-default-class, as a real
//     cluster does. Nobody fills an Ingress's status.loadBalancer unless
//     a controller of your own writes it.
//   - ServiceCIDRs, the ranges Services' ClusterIPs come from, and
//     IPAddresses, one object per allocated ClusterIP in Kubernetes'
//     allocator. mkube serves both kinds (create, read, update, watch,
//     delete) and starts with the ServiceCIDR "kubernetes" holding its
//     service range, but allocates ClusterIPs its own way
//     (registry/core/services.go): it neither creates IPAddresses for its
//     Services nor reads the ServiceCIDRs.
//
// Where things live:
//
//	file                   what it holds
//	ingresses.go           Ingresses: the kind and its columns
//	ingress_validation.go  their validation: hosts, paths, backends, TLS
//	ingressclasses.go      IngressClasses: the kind and its validation
//	ipaddresses.go         IPAddresses: the kind and its validation
//	servicecidrs.go        ServiceCIDRs: the kind and its validation
package networking
