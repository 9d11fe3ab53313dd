// Package client is how every mkube component talks to the API server: the
// list-watch of seed 000, section 一.
//
// Client is a small REST client speaking Kubernetes' paths and JSON.
// Informer is built on it: "ListAndWatch first lists all items and gets the
// resource version at the moment of call, and then uses the resource
// version to watch" (client-go's words). It keeps a local Cache of the
// objects and calls its handlers on every change, so a controller can ask
// "which pods run on node01?" without asking the server.
//
// Guarantees of an Informer:
//   - the sequence of states in its cache is a subsequence of the states on
//     the server: it may miss intermediate states, never invent or reorder;
//   - after a watch breaks it resumes from the last resourceVersion it saw,
//     and if the server no longer has that history (410 Gone) it lists
//     again and tells its handlers what changed meanwhile.
//
// SharedInformers hands out one Informer per resource for a whole process,
// so the controllers that all watch pods share one list-watch and cache.
//
// Package client/workqueue holds the rate-limited queue controllers feed
// from these handlers; client/record writes Events; client/leaderelection
// lets one of several schedulers or controller managers act, through a
// Lease.
//
// Where things live:
//
//	file           what it holds
//	rest.go        Client, the REST client: Get, List, Create, Update, UpdateStatus, Patch, Delete, Post on Kubernetes' paths and JSON; ListOptions; WaitForServer
//	watch.go       Watch and the Watcher that decodes a ?watch=true stream one Event at a time
//	resource.go    Resource (a kind's path and Go types) and the resources mkube's components use
//	kubeconfig.go  clients from a kubeconfig, a client-go rest.Config or a component's --server/--kubeconfig flags; Identity and Impersonate
//	cache.go       Cache, an informer's indexed local copy, with the pods-by-node and by-namespace indexes
//	informer.go    Informer: ListAndWatch into the Cache, Handlers, resume and relist after 410 Gone, retry backoff
//	informers.go   SharedInformers, one informer per resource and selection for a whole process; Run, WaitForSync and HasSynced
//	metrics.go     Metrics: client-go's rest_client_requests_total and rest_client_request_duration_seconds, recorded by every request
//	controller.go  RunWorkers, the Run of every controller: wait for the informers to sync, then start the workers
package client
