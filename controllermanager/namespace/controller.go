// Package namespace is the namespace controller: `kubectl delete namespace
// x` only marks x Terminating (the API server keeps it while
// spec.finalizers names "kubernetes"); this controller then deletes every
// namespaced object in it, kind by kind as discovery lists them (pods
// first), waits until they are all gone (pods leave gracefully), writes
// what holds it up in the namespace's conditions, removes its finalizer
// through the namespaces/x/finalize subresource, and deletes x for good.
// Meanwhile the API server refuses new objects in x (403 Forbidden).
//
// Where things live:
//
//	file           what it holds
//	controller.go  the Controller and sync: delete a Terminating namespace's content, then its finalizer, then the namespace
//	conditions.go  the namespace deleter's conditions (NamespaceDeletionContentFailure, NamespaceContentRemaining, ...) that say what holds it
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
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
)

// recheckAfter: how soon to look again while objects are still going;
// pods take their grace period, so there is no point polling faster.
const recheckAfter = time.Second

// ControllerName is the name the controller manager runs this controller
// by, and the key of its service account
// (bootstrappolicy.ControllerServiceAccounts).
const ControllerName = "namespace"

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
	clock      clock.PassiveClock
	log        *slog.Logger
}

// New is the namespace controller on d's shared namespace informer; it
// registers its handler, so call it before the informer runs.
func New(d controller.Deps, o Options) *Controller {
	ctrl := &Controller{client: d.Client, namespaces: d.Informers.For(client.Namespaces), queue: workqueue.NewNamed[string](d.Clock, ControllerName, d.QueueMetrics),
		workers: o.WorkersOr(DefaultWorkers), clock: d.Clock, log: d.Log.With("controller", ControllerName)}
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
		remaining, err := c.deleteContent(ctx, ns)
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
// returns how many objects are still there. Pods go first, as in
// Kubernetes' ordered namespace deletion: until every pod is gone,
// nothing else is deleted, so that no pod outlives the ConfigMaps,
// Secrets and service accounts it runs with. Each pass writes what holds
// the deletion up in the namespace's status conditions.
func (c *Controller) deleteContent(ctx context.Context, ns *corev1.Namespace) (int, error) {
	collections, err := c.namespacedCollections(ctx, ns.Name)
	if err != nil {
		return 0, err
	}
	d := deletion{remaining: map[string]int{}, finalizers: map[string]int{}}
	total := 0
	deleteAll := func(col collection) {
		if err := c.client.Do(ctx, http.MethodDelete, col.path, nil, nil); err != nil && !apierrors.IsNotFound(err) {
			d.failures = append(d.failures, fmt.Sprintf("delete %s: %v", col.path, err))
			return
		}
		var list metav1.PartialObjectMetadataList
		if err := c.client.Do(ctx, http.MethodGet, col.path, nil, &list); err != nil {
			d.failures = append(d.failures, fmt.Sprintf("list %s: %v", col.path, err))
			return
		}
		d.remaining[col.resource] += len(list.Items)
		total += len(list.Items)
		for _, item := range list.Items {
			for _, f := range item.Finalizers {
				d.finalizers[f]++
			}
		}
	}
	pods := slices.IndexFunc(collections, func(col collection) bool { return col.resource == "pods." })
	if pods >= 0 {
		deleteAll(collections[pods])
		if total > 0 {
			c.log.Info("namespace is terminating: its pods go first", "namespace", ns.Name, "pods", total)
			d.partial = true
			c.writeConditions(ctx, ns, d)
			return total, nil
		}
	}
	for i, col := range collections {
		if i != pods {
			deleteAll(col)
		}
	}
	c.writeConditions(ctx, ns, d)
	if len(d.failures) > 0 {
		return 0, fmt.Errorf("namespace %s: %s", ns.Name, strings.Join(d.failures, "; "))
	}
	return total, nil
}

// writeConditions records the pass in the namespace's status, if that
// changes it.
func (c *Controller) writeConditions(ctx context.Context, ns *corev1.Namespace, d deletion) {
	updated := ns.DeepCopy()
	if !mergeConditions(&updated.Status, d.conditions(), metav1.NewTime(c.clock.Now())) {
		return
	}
	if err := c.client.UpdateStatus(ctx, client.Namespaces, "", ns.Name, updated, nil); err != nil && !apierrors.IsNotFound(err) {
		c.log.Warn("could not write the namespace's conditions", "namespace", ns.Name, "err", err)
	}
}

// collection is a namespaced kind's collection in one namespace.
type collection struct {
	path     string // /apis/apps/v1/namespaces/NS/deployments
	resource string // RESOURCE.GROUP, "pods." for the core group's
}

// namespacedCollections asks discovery for every namespaced kind that can
// be listed and deleted as a collection, and returns its collection in ns.
func (c *Controller) namespacedCollections(ctx context.Context, ns string) ([]collection, error) {
	type groupVersion struct{ group, path string }
	groupVersions := []groupVersion{{"", "/api/v1"}}
	var groups metav1.APIGroupList
	if err := c.client.Do(ctx, http.MethodGet, "/apis", nil, &groups); err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	for _, g := range groups.Groups {
		groupVersions = append(groupVersions, groupVersion{g.Name, "/apis/" + g.PreferredVersion.GroupVersion})
	}
	var out []collection
	for _, gv := range groupVersions {
		var list metav1.APIResourceList
		if err := c.client.Do(ctx, http.MethodGet, gv.path, nil, &list); err != nil {
			return nil, fmt.Errorf("discovery %s: %w", gv.path, err)
		}
		for _, r := range list.APIResources {
			if r.Namespaced && !strings.Contains(r.Name, "/") && slices.Contains(r.Verbs, "deletecollection") && slices.Contains(r.Verbs, "list") {
				out = append(out, collection{path: gv.path + "/namespaces/" + ns + "/" + r.Name, resource: r.Name + "." + gv.group})
			}
		}
	}
	return out, nil
}
