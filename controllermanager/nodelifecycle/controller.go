// Package nodelifecycle notices nodes whose kubelet has gone silent and
// marks them, so that their pods move elsewhere (Kubernetes'
// node-lifecycle-controller, pkg/controller/nodelifecycle):
//
//  1. Every MonitorPeriod (5s) it looks at each node's heartbeats, the
//     Ready condition's lastHeartbeatTime and the Lease in kube-node-lease.
//     A node silent for longer than MonitorGracePeriod (50s in Kubernetes
//     1.32; StartupGracePeriod, 1m, for a node that never reported Ready)
//     gets every kubelet condition set to Unknown ("Kubelet stopped
//     posting node status."), a NodeNotReady event, and its pods marked
//     Ready=False, so Services stop sending them traffic.
//  2. On every node change it sets the taints the node's state calls for
//     (seed 003 section 6.5): Ready=Unknown → node.kubernetes.io/unreachable,
//     Ready=False → node.kubernetes.io/not-ready, both NoSchedule and
//     NoExecute; pressure conditions and cordon → their NoSchedule taints.
//     A kubelet that comes back reports Ready=True and the taints go.
//  3. The taint eviction controller does the rest: the pods' default
//     tolerations of not-ready and unreachable run out after 300s, the pods
//     are deleted, and their ReplicaSets create replacements that the
//     scheduler places on healthy nodes.
//
// Left out: Kubernetes' rate limits on evictions per zone, and its
// treatment of a zone where most nodes fail at once (it then stops
// evicting, suspecting the network rather than the nodes).
//
// Where things live:
//
//	file           what it holds
//	controller.go  the Controller: Options and their defaults, the monitor pass of step 1 and the taint sync of step 2
//	health.go      step 1's question: the heartbeats of a node and its Lease, whether it is silent, its conditions set Unknown
//	taints.go      step 2's answer: the taints a node's conditions and cordon call for, and which taints the controller owns
package nodelifecycle

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/internal/podcondition"
)

// ControllerName is the name the controller manager runs this controller
// by, and the key of its service account
// (bootstrappolicy.ControllerServiceAccounts).
const ControllerName = "node-lifecycle-controller"

// EventComponent signs its events (source.component), as Kubernetes'
// controller signs them.
const EventComponent = "node-controller"

// The reasons of its events, as Kubernetes gives them.
const (
	ReasonNodeNotReady = "NodeNotReady"
)

// DefaultWorkers is Kubernetes' nodeUpdateWorkerSize, which has no flag:
// eight nodes get their taints set at once, each sync one node's update.
const DefaultWorkers = 8

// Options are kube-controller-manager's flags of the same names, and the
// workers; a zero field takes its value from DefaultOptions.
type Options struct {
	MonitorPeriod      time.Duration // --node-monitor-period, 5s
	MonitorGracePeriod time.Duration // --node-monitor-grace-period, 50s
	StartupGracePeriod time.Duration // --node-startup-grace-period, 1m
	Workers            int           // concurrent taint syncs, DefaultWorkers
}

// DefaultOptions are Kubernetes 1.32's defaults.
var DefaultOptions = Options{MonitorPeriod: 5 * time.Second, MonitorGracePeriod: 50 * time.Second, StartupGracePeriod: time.Minute,
	Workers: DefaultWorkers}

// withDefaults fills o's zero fields from DefaultOptions, and its
// negative periods too: a ticker cannot tick every -5s.
func (o Options) withDefaults() Options {
	d := DefaultOptions
	orDefault := func(v, def time.Duration) time.Duration {
		if v <= 0 {
			return def
		}
		return v
	}
	return Options{MonitorPeriod: orDefault(o.MonitorPeriod, d.MonitorPeriod), MonitorGracePeriod: orDefault(o.MonitorGracePeriod, d.MonitorGracePeriod),
		StartupGracePeriod: orDefault(o.StartupGracePeriod, d.StartupGracePeriod), Workers: cmp.Or(o.Workers, d.Workers)}
}

// Controller is the node lifecycle controller.
type Controller struct {
	client *client.Client
	nodes  *client.Informer
	leases *client.Informer // kube-node-lease: the kubelets' cheap heartbeat
	pods   *client.Informer // indexed by node
	queue  *workqueue.Queue[string]
	clock  clock.WithTickerAndDelayedExecution
	opts   Options
	rec    *record.Recorder
	log    *slog.Logger

	mu     sync.Mutex
	health map[string]*health // node name → its heartbeats as last seen
}

// New is the node lifecycle controller on d's shared informers; it
// registers its handlers, so call it before they run.
func New(d controller.Deps, o Options) *Controller {
	ctrl := &Controller{client: d.Client, nodes: d.Informers.For(client.Nodes), leases: d.Informers.For(client.Leases),
		pods: d.Informers.For(client.Pods), queue: workqueue.NewNamed[string](d.Clock, ControllerName, d.QueueMetrics), clock: d.Clock, opts: o.withDefaults(),
		rec: d.Recorder.WithComponent(EventComponent), log: d.Log.With("controller", ControllerName),
		health: map[string]*health{}}
	ctrl.pods.Cache().AddIndex(client.IndexPodsByNode, client.PodNodeIndex)
	ctrl.nodes.AddHandler(client.Handler{
		OnAdd:    func(obj runtime.Object) { ctrl.queue.Add(obj.(*corev1.Node).Name) },
		OnUpdate: func(_, obj runtime.Object) { ctrl.queue.Add(obj.(*corev1.Node).Name) },
		OnDelete: func(obj runtime.Object) { ctrl.forget(obj.(*corev1.Node).Name) },
	})
	return ctrl
}

// Run waits for the caches, then taints nodes as they change (workers)
// and checks their health every MonitorPeriod; it blocks until ctx ends
// and the health checks have stopped.
func (c *Controller) Run(ctx context.Context) {
	var wg sync.WaitGroup // owner: Run
	defer wg.Wait()
	wg.Go(func() { c.monitor(ctx) }) // returns when ctx ends
	client.RunWorkers(ctx, c.queue, c.opts.Workers, c.syncTaints, c.log, "node", c.nodes, c.leases, c.pods)
}

// monitor checks node health every MonitorPeriod once the caches are
// synced, until ctx ends.
func (c *Controller) monitor(ctx context.Context) {
	if !client.WaitForSync(ctx, c.nodes, c.leases, c.pods) {
		return
	}
	c.log.Info("monitoring node health", "period", c.opts.MonitorPeriod,
		"gracePeriod", c.opts.MonitorGracePeriod, "startupGracePeriod", c.opts.StartupGracePeriod)
	t := c.clock.NewTicker(c.opts.MonitorPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			c.monitorNodeHealth(ctx)
		}
	}
}

func (c *Controller) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.health, name)
}

// monitorNodeHealth is one pass over every node (step 1 above).
func (c *Controller) monitorNodeHealth(ctx context.Context) {
	now := c.clock.Now()
	for _, obj := range c.nodes.Cache().List() {
		node := obj.(*corev1.Node)
		var lease *coordinationv1.Lease
		if obj, ok := c.leases.Cache().Get(corev1.NamespaceNodeLease + "/" + node.Name); ok {
			lease = obj.(*coordinationv1.Lease)
		}
		c.mu.Lock()
		if _, exists := c.nodes.Cache().Get(node.Name); !exists {
			c.mu.Unlock()
			continue // deleted since the list: forget has run or will
		}
		h := c.health[node.Name]
		if h == nil {
			h = &health{}
			c.health[node.Name] = h
		}
		h.observe(node, lease, now)
		silent := h.silent(node, now, c.opts.MonitorGracePeriod, c.opts.StartupGracePeriod)
		probe := h.probe
		c.mu.Unlock()
		if !silent {
			continue
		}
		if err := c.markUnknown(ctx, node, now, probe); err != nil && ctx.Err() == nil {
			c.log.Warn("could not mark node status unknown; retrying next pass", "node", node.Name, "err", err)
		}
		// Every pass, not only the first: a pod whose update failed, or
		// that was bound to the node since, is marked now. Pods already
		// not ready cost nothing.
		for _, obj := range c.pods.Cache().ByIndex(client.IndexPodsByNode, node.Name) {
			pod := obj.(*corev1.Pod)
			if err := c.markPodNotReady(ctx, pod, now); err != nil && ctx.Err() == nil {
				c.log.Warn("could not mark pod not ready; retrying next pass", "pod", client.KeyOf(pod), "err", err)
			}
		}
	}
}

// markUnknown sets a silent node's conditions to Unknown and records
// NodeNotReady.
func (c *Controller) markUnknown(ctx context.Context, node *corev1.Node, now, lastHeard time.Time) error {
	conds, changed := unknownConditions(node.Status.Conditions, metav1.NewTime(now))
	if !changed {
		return nil
	}
	next := node.DeepCopy()
	next.Status.Conditions = conds
	if err := c.client.UpdateStatus(ctx, client.Nodes, "", node.Name, next, nil); err != nil {
		return fmt.Errorf("update status: %w", err)
	}
	c.log.Info("node's kubelet stopped posting status: conditions now Unknown", "node", node.Name,
		"silentFor", now.Sub(lastHeard).Round(time.Second))
	c.rec.Event(node, corev1.EventTypeNormal, ReasonNodeNotReady, "Node %s status is now: NodeNotReady", node.Name)
	return nil
}

// markPodNotReady sets the pod's Ready condition to False: nobody can say
// it serves (Kubernetes' MarkPodsNotReady). The endpoints controller then
// takes it out of its Services.
func (c *Controller) markPodNotReady(ctx context.Context, pod *corev1.Pod, now time.Time) error {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return nil
	}
	next := pod.DeepCopy()
	ready := podcondition.Get(next, corev1.PodReady)
	if ready == nil || ready.Status == corev1.ConditionFalse {
		return nil
	}
	ready.Status, ready.LastTransitionTime = corev1.ConditionFalse, metav1.NewTime(now)
	if err := c.client.UpdateStatus(ctx, client.Pods, pod.Namespace, pod.Name, next, nil); err != nil {
		return err
	}
	c.log.Info("marked pod not ready: its node is not ready", "pod", client.KeyOf(pod), "node", pod.Spec.NodeName)
	c.rec.Event(pod, corev1.EventTypeWarning, ReasonNodeNotReady, "Node is not ready")
	return nil
}

// syncTaints gives one node the taints its state calls for (step 2 above).
func (c *Controller) syncTaints(ctx context.Context, name string) error {
	obj, ok := c.nodes.Cache().Get(name)
	if !ok {
		return nil
	}
	node := obj.(*corev1.Node)
	want := wantTaints(node, metav1.NewTime(c.clock.Now()))
	if sameTaints(want, node.Spec.Taints) {
		return nil
	}
	next := node.DeepCopy()
	next.Spec.Taints = want
	if err := c.client.Update(ctx, client.Nodes, "", name, next, nil); err != nil {
		return fmt.Errorf("update taints: %w", err) // a conflict: the next event brings the fresh node
	}
	c.log.Info("set node taints from its conditions", "node", name, "taints", describe(want))
	return nil
}

// describe is "key=value:Effect, ..." as kubectl prints taints.
func describe(taints []corev1.Taint) string {
	s := ""
	for i, t := range taints {
		if i > 0 {
			s += ", "
		}
		s += t.ToString()
	}
	if s == "" {
		return "none"
	}
	return s
}
