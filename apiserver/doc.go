// Package apiserver is mkube's API server: the hub of seed 000's figure.
// Every other component talks only to it, and only it talks to etcd.
//
// A request flows through four pieces, each in its own file:
//
//   - requestinfo.go turns a URL path into a RequestInfo (group, version,
//     namespace, resource, name, subresource, verb), as kube-apiserver does.
//   - registry.go holds one Resource descriptor per kind: what it is called,
//     whether it is namespaced, and its strategy (defaults, validation, which
//     fields its status subresource owns). Adding a resource is one
//     declaration in resources.go; the handlers are shared.
//   - storage.go is the generic REST storage: encode, decode, server-owned
//     metadata, optimistic concurrency, graceful deletion and finalizers, on
//     top of package store.
//   - watchcache.go keeps one etcd watch per resource and fans its events out
//     to every HTTP watcher (seed steps 4, 8 and 11: etcd tells the API
//     server, and the API server tells the components that list-watch it).
package apiserver
