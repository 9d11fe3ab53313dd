// Package rootcacertpublisher is Kubernetes' root-ca-cert-publisher: every
// namespace has a ConfigMap kube-root-ca.crt holding the cluster's CA
// (ca.crt), so that a pod can check that it talks to the real API server
// at kubernetes.default.svc. The controller writes it when a namespace
// appears, and puts it back when it is deleted or changed.
//
// It all lives in controller.go: CAToPublish picks the CA as
// kube-controller-manager does (--root-ca-file, else the kubeconfig's),
// New registers the informer handlers, Run runs the workers until ctx
// ends, sync does one item.
package rootcacertpublisher

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
)

// Name and key of the ConfigMap, and its description, as Kubernetes has them.
const (
	Name        = "kube-root-ca.crt"
	Key         = "ca.crt"
	description = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."
)

// ControllerName is the name the controller manager runs this controller
// by, and the key of its service account
// (bootstrappolicy.ControllerServiceAccounts).
const ControllerName = "root-ca-cert-publisher"

// DefaultWorkers: one is plenty, a sync being one cache read and at most
// one write.
const DefaultWorkers = 1

// Options: the CA to publish (CAToPublish's), and Workers, 0 meaning
// DefaultWorkers. An empty CA is published as it is, as Kubernetes does:
// an empty ca.crt, which lets pods start but verify nothing (New says so
// in the log).
type Options struct {
	controller.Options
	CA []byte
}

// CAToPublish is the CA kube-controller-manager publishes: the contents of
// rootCAFile (its --root-ca-file) if given, else the CA by which its
// kubeconfig trusts the API server (the client config's CA data). With
// neither, as on the plain port over http, it is empty, and so is every
// namespace's ca.crt.
func CAToPublish(rootCAFile, kubeconfig string) ([]byte, error) {
	if rootCAFile != "" {
		ca, err := os.ReadFile(rootCAFile)
		if err != nil {
			return nil, fmt.Errorf("root CA file: %w", err)
		}
		return ca, nil
	}
	if kubeconfig == "" {
		return nil, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	if err := rest.LoadTLSFiles(cfg); err != nil { // certificate-authority: a file's name
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	return cfg.CAData, nil
}

// Controller keeps kube-root-ca.crt in every namespace.
type Controller struct {
	client     *client.Client
	namespaces *client.Informer
	configMaps *client.Informer
	queue      *workqueue.Queue[string] // namespace names
	data       map[string]string
	workers    int
	log        *slog.Logger
}

// New is the controller on d's shared namespace and ConfigMap informers;
// it registers its handlers, so call it before they run. Without a CA it
// says at once, as an error, what that costs: a reader who left out
// --root-ca-file learns it here, not from a pod that cannot verify the
// API server.
func New(d controller.Deps, o Options) *Controller {
	ctrl := &Controller{client: d.Client, namespaces: d.Informers.For(client.Namespaces), configMaps: d.Informers.For(client.ConfigMaps),
		queue: workqueue.NewNamed[string](d.Clock, ControllerName, d.QueueMetrics), data: map[string]string{Key: string(o.CA)},
		workers: o.WorkersOr(DefaultWorkers), log: d.Log.With("controller", ControllerName)}
	if len(o.CA) == 0 {
		ctrl.log.Error("no CA to publish: every namespace's ConfigMap "+Name+" holds an empty "+Key+
			", so pods cannot verify the API server at kubernetes.default.svc; give --root-ca-file the API server's CA (CERT-DIR/ca.crt), "+
			"or run on a --kubeconfig whose cluster has one", "configmap", Name)
	}
	enqueue := func(obj runtime.Object) { ctrl.queue.Add(client.KeyOf(obj)) }
	ctrl.namespaces.AddHandler(client.Handler{OnAdd: enqueue, OnUpdate: func(_, obj runtime.Object) { enqueue(obj) }})
	// Somebody deleting or editing the ConfigMap gets it back as it was.
	mine := func(obj runtime.Object) {
		if cm := obj.(*corev1.ConfigMap); cm.Name == Name {
			ctrl.queue.Add(cm.Namespace)
		}
	}
	ctrl.configMaps.AddHandler(client.Handler{OnUpdate: func(_, obj runtime.Object) { mine(obj) }, OnDelete: mine})
	return ctrl
}

// Run starts the workers and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	client.RunWorkers(ctx, c.queue, c.workers, c.sync, c.log, "namespace", c.namespaces, c.configMaps)
}

func (c *Controller) sync(ctx context.Context, ns string) error {
	if !controller.NamespaceActive(c.namespaces, ns) {
		return nil // gone or going: nothing new may be created in it
	}
	cur, ok := c.configMaps.Cache().Get(ns + "/" + Name)
	if !ok {
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: ns, Annotations: map[string]string{"kubernetes.io/description": description}},
			Data:       c.data}
		err := c.client.Create(ctx, client.ConfigMaps, ns, cm, nil)
		if apierrors.IsAlreadyExists(err) {
			return nil // the cache had not seen it yet; its event will bring it here again
		}
		if err == nil {
			c.log.Info("published the cluster's CA", "namespace", ns, "configmap", Name)
		}
		return err
	}
	cm := cur.(*corev1.ConfigMap).DeepCopy()
	if maps.Equal(cm.Data, c.data) {
		return nil
	}
	cm.Data = c.data
	if err := c.client.Update(ctx, client.ConfigMaps, ns, Name, cm, nil); err != nil {
		return err
	}
	c.log.Info("put the cluster's CA back", "namespace", ns, "configmap", Name)
	return nil
}
