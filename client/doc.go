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
// from these handlers.
package client
