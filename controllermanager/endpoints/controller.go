// Package endpoints is the endpoints controller: for every Service with a
// selector it keeps an Endpoints object of the same name listing the IPs
// of the matching pods — ready ones under addresses, the others under
// notReadyAddresses — with the Service's target ports resolved against
// each pod's container ports. Proxies (kube-proxy) route the Service's
// ClusterIP to exactly these addresses (seed 003, Service and Endpoints).
//
// It all lives in controller.go: New registers the informer handlers, Run
// runs the workers until ctx ends, sync does one item.
package endpoints

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/internal/podcondition"
)

// ControllerName is the name the controller manager runs this controller
// by, and the key of its service account
// (bootstrappolicy.ControllerServiceAccounts).
const ControllerName = "endpoints"

// DefaultWorkers is kube-controller-manager's --concurrent-endpoint-syncs.
const DefaultWorkers = 5

// Options tune the controller: Workers, 0 meaning DefaultWorkers.
type Options = controller.Options

// Controller keeps Endpoints in step with Services and pods.
type Controller struct {
	client    *client.Client
	services  *client.Informer
	endpoints *client.Informer
	pods      *client.Informer
	queue     *workqueue.Queue[string] // Service keys
	workers   int
	log       *slog.Logger
}

// New is the endpoints controller on d's shared informers; it registers
// its handlers, so call it before they run.
func New(d controller.Deps, o Options) *Controller {
	ctrl := &Controller{client: d.Client, services: d.Informers.For(client.Services), endpoints: d.Informers.For(client.Endpoints),
		pods: d.Informers.For(client.Pods), queue: workqueue.NewNamed[string](d.Clock, ControllerName, d.QueueMetrics), workers: o.WorkersOr(DefaultWorkers),
		log: d.Log.With("controller", ControllerName)}
	ctrl.pods.Cache().AddIndex(client.IndexByNamespace, client.NamespaceIndex)
	ctrl.services.Cache().AddIndex(client.IndexByNamespace, client.NamespaceIndex)
	ctrl.services.AddHandler(client.Handler{
		OnAdd:    func(obj runtime.Object) { ctrl.queue.Add(client.KeyOf(obj)) },
		OnUpdate: func(_, obj runtime.Object) { ctrl.queue.Add(client.KeyOf(obj)) },
		OnDelete: func(obj runtime.Object) { ctrl.queue.Add(client.KeyOf(obj)) },
	})
	ctrl.pods.AddHandler(client.Handler{
		OnAdd:    func(obj runtime.Object) { ctrl.enqueueServicesOf(obj.(*corev1.Pod)) },
		OnUpdate: func(old, obj runtime.Object) { ctrl.enqueueServicesOf(old.(*corev1.Pod), obj.(*corev1.Pod)) },
		OnDelete: func(obj runtime.Object) { ctrl.enqueueServicesOf(obj.(*corev1.Pod)) },
	})
	return ctrl
}

// enqueueServicesOf queues the Services selecting any of these pod states.
func (c *Controller) enqueueServicesOf(pods ...*corev1.Pod) {
	controller.ForServicesSelecting(c.services, c.queue.Add, pods...)
}

// Run starts the workers and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	client.RunWorkers(ctx, c.queue, c.workers, c.sync, c.log, "service", c.services, c.endpoints, c.pods)
}

// sync writes the Endpoints of one Service, or deletes them with it.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	obj, ok := c.services.Cache().Get(key)
	if !ok {
		err := c.client.Delete(ctx, client.Endpoints, ns, name, nil)
		if err == nil {
			c.log.Info("deleted endpoints of a deleted service", "service", key)
		}
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	svc := obj.(*corev1.Service)
	if svc.Spec.Selector == nil {
		return nil // endpoints of a selector-less Service are the user's
	}
	want := &corev1.Endpoints{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"},
		ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Namespace: svc.Namespace, Labels: svc.Labels},
		Subsets:    c.subsets(svc),
	}
	cur, exists := c.endpoints.Cache().Get(key)
	if !exists {
		if err := c.client.Create(ctx, client.Endpoints, ns, want, nil); err != nil {
			return fmt.Errorf("create endpoints %s: %w", key, err)
		}
		c.log.Info("created endpoints", "service", key, "addresses", countAddresses(want.Subsets))
		return nil
	}
	have := cur.(*corev1.Endpoints)
	if equality.Semantic.DeepEqual(have.Subsets, want.Subsets) && equality.Semantic.DeepEqual(have.Labels, want.Labels) {
		return nil
	}
	want.ResourceVersion = have.ResourceVersion
	if err := c.client.Update(ctx, client.Endpoints, ns, name, want, nil); err != nil {
		return fmt.Errorf("update endpoints %s: %w", key, err)
	}
	c.log.Info("updated endpoints", "service", key, "addresses", countAddresses(want.Subsets))
	return nil
}

// subsets groups the selected pods by their resolved ports: pods whose
// named target ports resolve alike share a subset.
func (c *Controller) subsets(svc *corev1.Service) []corev1.EndpointSubset {
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	bySig := map[string]*corev1.EndpointSubset{}
	for _, obj := range c.pods.Cache().ByIndex(client.IndexByNamespace, svc.Namespace) {
		pod := obj.(*corev1.Pod)
		if !sel.Matches(labels.Set(pod.Labels)) || pod.Status.PodIP == "" || pod.DeletionTimestamp != nil ||
			pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		ports := resolvePorts(svc, pod)
		sig := fmt.Sprint(ports)
		sub := bySig[sig]
		if sub == nil {
			sub = &corev1.EndpointSubset{Ports: ports}
			bySig[sig] = sub
		}
		addr := corev1.EndpointAddress{IP: pod.Status.PodIP, NodeName: nodeName(pod),
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}}
		if podcondition.IsReady(pod) {
			sub.Addresses = append(sub.Addresses, addr)
		} else {
			sub.NotReadyAddresses = append(sub.NotReadyAddresses, addr)
		}
	}
	var out []corev1.EndpointSubset
	for _, sub := range bySig {
		sort.Slice(sub.Addresses, func(i, j int) bool { return sub.Addresses[i].IP < sub.Addresses[j].IP })
		sort.Slice(sub.NotReadyAddresses, func(i, j int) bool { return sub.NotReadyAddresses[i].IP < sub.NotReadyAddresses[j].IP })
		out = append(out, *sub)
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i].Ports) < fmt.Sprint(out[j].Ports) })
	return out
}

// resolvePorts maps each Service port to the pod's port: a number as is,
// a name through the pod's container ports. A name the pod lacks drops
// the port, as Kubernetes does.
func resolvePorts(svc *corev1.Service, pod *corev1.Pod) []corev1.EndpointPort {
	var out []corev1.EndpointPort
	for _, sp := range svc.Spec.Ports {
		port := sp.TargetPort.IntVal
		if sp.TargetPort.StrVal != "" {
			port = 0
			for _, ctr := range pod.Spec.Containers {
				for _, cp := range ctr.Ports {
					if cp.Name == sp.TargetPort.StrVal && cp.Protocol == sp.Protocol {
						port = cp.ContainerPort
					}
				}
			}
		}
		if port == 0 {
			continue
		}
		out = append(out, corev1.EndpointPort{Name: sp.Name, Port: port, Protocol: sp.Protocol, AppProtocol: sp.AppProtocol})
	}
	return out
}

func nodeName(pod *corev1.Pod) *string {
	if pod.Spec.NodeName == "" {
		return nil
	}
	n := pod.Spec.NodeName
	return &n
}

func countAddresses(subsets []corev1.EndpointSubset) int {
	n := 0
	for _, s := range subsets {
		n += len(s.Addresses)
	}
	return n
}
