package client

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// SharedInformers hands out one Informer per resource (and selection) for
// a whole process, as client-go's SharedInformerFactory does: when the
// ReplicaSet, endpoints and disruption controllers all ask for pods, they
// get the same Informer, so the API server serves one list-watch of pods
// instead of three, and every controller reads the same cache.
//
// Lifecycle: every component asks for its informers, and registers its
// handlers and indexes on them, first; then one Run starts them all. An
// informer asked for after Run would never run, so For panics then rather
// than leave a controller waiting for a sync that never comes.
type SharedInformers struct {
	client *Client
	log    *slog.Logger

	mu        sync.Mutex
	informers map[selection]*Informer
	order     []*Informer // in the order asked for, so Run starts and logs them predictably
	started   bool        // set by Run: no informer may be added after
}

// selection is what tells two informers apart: the collection's path
// (resource and namespace) and the selectors that narrow it. Asking twice
// for the same selection returns the same informer.
type selection struct {
	path, labelSelector, fieldSelector string
}

// NewSharedInformers returns an empty factory for c's server. log may be
// nil.
func NewSharedInformers(c *Client, log *slog.Logger) *SharedInformers {
	return &SharedInformers{client: c, log: log, informers: map[selection]*Informer{}}
}

// For returns the informer of every object of res, in all namespaces: the
// same one on every call.
func (f *SharedInformers) For(res Resource) *Informer {
	return f.ForSelection(res, "", ListOptions{})
}

// ForSelection returns the shared informer of res in namespace ("" = all)
// narrowed by opts' label and field selectors, such as a kubelet's pods of
// one node (fieldSelector spec.nodeName=node01). Other fields of opts are
// ignored: an informer chooses its own resourceVersions and timeouts.
func (f *SharedInformers) ForSelection(res Resource, namespace string, opts ListOptions) *Informer {
	sel := selection{path: res.Path(namespace, ""), labelSelector: opts.LabelSelector, fieldSelector: opts.FieldSelector}
	f.mu.Lock()
	defer f.mu.Unlock()
	if inf, ok := f.informers[sel]; ok {
		return inf
	}
	if f.started {
		panic(fmt.Sprintf("client: informer for %s asked for after SharedInformers.Run: it would never run", sel.path))
	}
	inf := NewInformer(f.client, res, namespace, opts, f.log)
	f.informers[sel] = inf
	f.order = append(f.order, inf)
	return inf
}

// Run runs every informer handed out, each on a goroutine of its own,
// until ctx ends, and returns once they all have. Call it once.
func (f *SharedInformers) Run(ctx context.Context) {
	f.mu.Lock()
	if f.started {
		f.mu.Unlock()
		panic("client: SharedInformers.Run called twice")
	}
	f.started = true
	informers := f.order
	f.mu.Unlock()

	var wg sync.WaitGroup
	for _, inf := range informers {
		wg.Go(func() { inf.Run(ctx) }) // returns when ctx ends
	}
	wg.Wait()
}

// WaitForSync blocks until every informer handed out has listed once, or
// ctx ends; it reports which.
func (f *SharedInformers) WaitForSync(ctx context.Context) bool {
	f.mu.Lock()
	informers := f.order
	f.mu.Unlock()
	return WaitForSync(ctx, informers...)
}

// HasSynced reports whether every informer handed out has listed once
// (a component's /readyz asks).
func (f *SharedInformers) HasSynced() bool {
	f.mu.Lock()
	informers := f.order
	f.mu.Unlock()
	for _, i := range informers {
		if !i.HasSynced() {
			return false
		}
	}
	return true
}
