// Package apiserver is mkube's API server: the hub of seed 000's figure.
// Every other component talks only to it, and only it talks to etcd.
//
// This package is the generic machinery, the same for every kind; the
// kinds themselves are declared in apiserver/registry/<group>/. A request
// flows through these pieces:
//
//   - requestinfo.go turns a URL path into a RequestInfo (group, version,
//     namespace, resource, name, subresource, verb), as kube-apiserver does.
//   - authorize.go, after authentication, asks the authorizer (package
//     authorization: system:masters, then RBAC) whether the user may, and
//     answers 403 if not; follow.go feeds the RBAC authorizer its roles and
//     bindings from the server's own watch cache.
//   - resource.go is the Resource descriptor a kind declares: its names,
//     scope, strategy (defaults, validation, its own admission rules),
//     printer columns and subresources, each subresource with its handler.
//   - handlers.go serves the verbs on objects and collections, and hands a
//     subresource to the handler its Resource declares (request.go is what
//     such a handler may use); status.go and scale.go are the two generic
//     subresources.
//   - admission/ is the admission chain: named plugins in kube-apiserver's
//     order, run on every write between defaulting and validation; its
//     webhook/ calls the cluster's admission webhooks and policy/ applies
//     its admission policies (admission_webhooks.go wires them).
//   - storage.go is the generic REST storage: encode, decode, server-owned
//     metadata, optimistic concurrency, graceful deletion and finalizers, on
//     top of package store.
//   - watchcache.go keeps one etcd watch per resource and watch.go fans its
//     events out to every HTTP watcher (seed steps 4, 8 and 11: etcd tells
//     the API server, and the API server tells the components that
//     list-watch it).
//   - discovery.go, openapi.go and table.go describe the kinds to kubectl,
//     from the same declarations.
//
// # Adding a kind
//
//  1. Write one file in the folder of its API group,
//     apiserver/registry/<group>/<plural>.go (a new group is a new folder
//     with a doc.go), declaring `var <Plural> = &apiserver.Resource{...}`:
//     GroupVersion, Name, Kind, Namespaced, New and NewList; then only what
//     differs from the defaults: ShortNames, Default, Validate, Columns
//     and Row, Fields for field selectors, Subresources (StatusSubresource,
//     ScaleSubresource or one with its own Serve), Bootstrap objects.
//  2. Add one line, `<group>.<Plural>,`, to registry.Resources in
//     apiserver/registry/registry.go.
//
// Routing, discovery (kubectl api-resources), OpenAPI (kubectl explain),
// tables (kubectl get), watch and storage in etcd under
// /registry/<plural>/ then follow from the declaration; the scheme already
// knows every built-in Kubernetes type. A rule that spans kinds (a pod's
// priority from its PriorityClass) is an admission plugin in admission/
// instead, with its place in admission.Plugins.
package apiserver
