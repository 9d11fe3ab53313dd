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
package store
