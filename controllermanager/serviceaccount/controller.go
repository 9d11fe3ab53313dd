// Package serviceaccount is Kubernetes' serviceaccounts-controller: every
// namespace has a ServiceAccount named "default", the identity its pods
// run as unless they name another (seed 003 §六.3). It creates it when a
// namespace appears, and again if somebody deletes it.
//
// It all lives in controller.go: New registers the informer handlers, Run
// runs the workers until ctx ends, sync does one item.
package serviceaccount

import (
	"context"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
)

// ControllerName is the name the controller manager runs this controller
// by, and the key of its service account
// (bootstrappolicy.ControllerServiceAccounts).
const ControllerName = "serviceaccount"

// DefaultWorkers is kube-controller-manager's --concurrent-serviceaccount-syncs.
const DefaultWorkers = 5

// defaultName is the ServiceAccount every namespace gets.
const defaultName = "default"

// Options tune the controller: Workers, 0 meaning DefaultWorkers.
type Options = controller.Options

// Controller keeps a "default" ServiceAccount in every namespace.
type Controller struct {
	client          *client.Client
	namespaces      *client.Informer
	serviceAccounts *client.Informer
	queue           *workqueue.Queue[string] // namespace names
	workers         int
	log             *slog.Logger
}

// New is the controller on d's shared namespace and ServiceAccount
// informers; it registers its handlers, so call it before they run.
func New(d controller.Deps, o Options) *Controller {
	ctrl := &Controller{client: d.Client, namespaces: d.Informers.For(client.Namespaces),
		serviceAccounts: d.Informers.For(client.ServiceAccounts), queue: workqueue.NewNamed[string](d.Clock, ControllerName, d.QueueMetrics),
		workers: o.WorkersOr(DefaultWorkers), log: d.Log.With("controller", ControllerName)}
	ctrl.namespaces.AddHandler(client.Handler{
		OnAdd:    func(obj runtime.Object) { ctrl.queue.Add(client.KeyOf(obj)) },
		OnUpdate: func(_, obj runtime.Object) { ctrl.queue.Add(client.KeyOf(obj)) },
	})
	ctrl.serviceAccounts.AddHandler(client.Handler{OnDelete: func(obj runtime.Object) {
		if sa := obj.(*corev1.ServiceAccount); sa.Name == defaultName {
			ctrl.queue.Add(sa.Namespace)
		}
	}})
	return ctrl
}

// Run starts the workers and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	client.RunWorkers(ctx, c.queue, c.workers, c.sync, c.log, "namespace", c.namespaces, c.serviceAccounts)
}

// sync creates the namespace's default ServiceAccount if it has none. A
// namespace being deleted gets nothing new: the API server would refuse it.
func (c *Controller) sync(ctx context.Context, ns string) error {
	if !controller.NamespaceActive(c.namespaces, ns) {
		return nil
	}
	if _, ok := c.serviceAccounts.Cache().Get(ns + "/" + defaultName); ok {
		return nil
	}
	sa := &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: metav1.ObjectMeta{Name: defaultName, Namespace: ns}}
	err := c.client.Create(ctx, client.ServiceAccounts, ns, sa, nil)
	switch {
	case apierrors.IsAlreadyExists(err): // the cache had not seen it yet
		return nil
	case err != nil:
		return err
	}
	c.log.Info("created the default ServiceAccount", "namespace", ns)
	return nil
}
