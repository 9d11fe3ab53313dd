// Package store is mkube's etcd storage layer: the only code that talks to
// etcd. The API server keeps every object under a key
//
//	/registry/<resource>/<namespace>/<name>   (namespaced, e.g. pods)
//	/registry/<resource>/<name>               (cluster-scoped, e.g. nodes)
//
// and uses etcd's revisions as Kubernetes resourceVersions: an object's
// resourceVersion is the etcd ModRevision of its key.
//
// Seed 000, steps 3, 7, 10 and 13 are writes through this package; steps 4,
// 8 and 11 ("etcd sends an event to the APIServer") are its Watch.
//
// Concurrency is optimistic, as in Kubernetes: Create succeeds only if the
// key has never been created (CreateRevision == 0), Update and Delete only if
// the key still has the ModRevision the caller read. A loser gets ErrConflict
// and must re-read.
//
// Where things live:
//
//	file          what it holds
//	store.go      the Store: Create, Get, Update, Delete (each one guarded etcd transaction), List by prefix in pages, Revision; the sentinel errors
//	watch.go      Watch from a revision (events in revision order, CompactedError when the revision is gone), RequestProgress
//	lease.go      PutWithTTL (a key on an etcd lease, deleted by etcd when nobody writes it for the TTL) and Remove: the API servers' master leases
//	key.go        the key layout: Root, Key, Prefix, NamespaceOf
//	compact.go    Compact and RunCompactor, which discards old history every interval as kube-apiserver's compactor does; the Option WithClock
//	embedded.go   StartEmbedded: the single-member etcd the API server runs in-process unless pointed at an external one
package store
