// Package namespace is the namespace controller: `kubectl delete namespace
// x` only marks x Terminating (the API server keeps it while
// spec.finalizers names "kubernetes"); this controller then deletes every
// namespaced object in it, kind by kind as discovery lists them, waits
// until they are all gone (pods leave gracefully), removes its finalizer
// through the namespaces/x/finalize subresource, and deletes x for good.
// Meanwhile the API server refuses new objects in x (403 Forbidden).
package namespace

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
)

// recheckAfter: how soon to look again while objects are still going;
// pods take their grace period, so there is no point polling faster.
const recheckAfter = time.Second

// DefaultWorkers is kube-controller-manager's --concurrent-namespace-syncs.
const DefaultWorkers = 10

// Options tune the controller: Workers, 0 meaning DefaultWorkers.
type Options = controller.Options

// Controller empties and removes deleted namespaces.
type Controller struct {
	client     *client.Client
	namespaces *client.Informer
	queue      *workqueue.Queue[string] // namespace names
	workers    int
	log        *slog.Logger
}

// New is the namespace controller on d's shared namespace informer; it
// registers its handler, so call it before the informer runs.
func New(d controller.Deps, o Options) *Controller {
	ctrl := &Controller{client: d.Client, namespaces: d.Informers.For(client.Namespaces), queue: workqueue.New[string](d.Clock),
		workers: o.WorkersOr(DefaultWorkers), log: d.Log.With("controller", "namespace")}
	enqueue := func(obj runtime.Object) {
		if obj.(*corev1.Namespace).DeletionTimestamp != nil {
			ctrl.queue.Add(client.KeyOf(obj))
		}
	}
	ctrl.namespaces.AddHandler(client.Handler{OnAdd: enqueue, OnUpdate: func(_, obj runtime.Object) { enqueue(obj) }})
	return ctrl
}

// Run starts the workers and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	client.RunWorkers(ctx, c.queue, c.workers, c.sync, c.log, "namespace", c.namespaces)
}

func (c *Controller) sync(ctx context.Context, name string) error {
	obj, ok := c.namespaces.Cache().Get(name)
	if !ok {
		return nil
	}
	ns := obj.(*corev1.Namespace)
	if ns.DeletionTimestamp == nil {
		return nil
	}
	if slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		remaining, err := c.deleteContent(ctx, name)
		if err != nil {
			return err
		}
		if remaining > 0 {
			c.log.Info("namespace is terminating: waiting for its objects to go", "namespace", name, "remaining", remaining)
			c.queue.AddAfter(name, recheckAfter)
			return nil
		}
		final := ns.DeepCopy()
		final.Spec.Finalizers = slices.DeleteFunc(final.Spec.Finalizers, func(f corev1.FinalizerName) bool { return f == corev1.FinalizerKubernetes })
		if err := c.client.Do(ctx, http.MethodPut, client.Namespaces.Path("", name, "finalize"), final, nil); err != nil {
			return fmt.Errorf("finalize namespace %s: %w", name, err)
		}
		c.log.Info("namespace is empty: removed its finalizer", "namespace", name)
	}
	err := c.client.Delete(ctx, client.Namespaces, "", name, nil)
	switch {
	case apierrors.IsNotFound(err):
		return nil // an earlier sync finished it
	case err != nil:
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	c.log.Info("deleted namespace", "namespace", name)
	return nil
}

// deleteContent deletes the collections of every namespaced kind in ns and
// returns how many objects are still there.
func (c *Controller) deleteContent(ctx context.Context, ns string) (int, error) {
	paths, err := c.namespacedCollections(ctx, ns)
	if err != nil {
		return 0, err
	}
	remaining := 0
	for _, path := range paths {
		if err := c.client.Do(ctx, http.MethodDelete, path, nil, nil); err != nil && !apierrors.IsNotFound(err) {
			return 0, fmt.Errorf("delete %s: %w", path, err)
		}
		var list metav1.PartialObjectMetadataList
		if err := c.client.Do(ctx, http.MethodGet, path, nil, &list); err != nil {
			return 0, fmt.Errorf("list %s: %w", path, err)
		}
		remaining += len(list.Items)
	}
	return remaining, nil
}

// namespacedCollections asks discovery for every namespaced kind that can
// be listed and deleted as a collection, and returns its path in ns.
func (c *Controller) namespacedCollections(ctx context.Context, ns string) ([]string, error) {
	groupVersions := []string{"/api/v1"}
	var groups metav1.APIGroupList
	if err := c.client.Do(ctx, http.MethodGet, "/apis", nil, &groups); err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	for _, g := range groups.Groups {
		groupVersions = append(groupVersions, "/apis/"+g.PreferredVersion.GroupVersion)
	}
	var paths []string
	for _, gv := range groupVersions {
		var list metav1.APIResourceList
		if err := c.client.Do(ctx, http.MethodGet, gv, nil, &list); err != nil {
			return nil, fmt.Errorf("discovery %s: %w", gv, err)
		}
		for _, r := range list.APIResources {
			if r.Namespaced && !strings.Contains(r.Name, "/") && slices.Contains(r.Verbs, "deletecollection") && slices.Contains(r.Verbs, "list") {
				paths = append(paths, gv+"/namespaces/"+ns+"/"+r.Name)
			}
		}
	}
	return paths, nil
}
