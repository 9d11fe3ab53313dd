// Package discovery declares discovery.k8s.io/v1: EndpointSlices, the
// scalable form of a Service's core/v1 Endpoints. The EndpointSlice
// controller (controllermanager/endpointslice) keeps them for every
// Service with a selector, at most 100 endpoints a slice, one endpoint per
// pod with its ready, serving and terminating conditions; kube-proxy and
// `kubectl describe service` read them, found by their
// kubernetes.io/service-name label.
//
// Where things live:
//
//	file               what it holds
//	endpointslices.go  the EndpointSlice kind, its defaults and its columns
//	validation.go      its validation: address types, addresses, ports, conditions
package discovery
