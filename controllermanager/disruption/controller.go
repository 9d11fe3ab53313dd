// Package disruption is the disruption controller: it keeps the status of
// every PodDisruptionBudget current — how many of its pods are expected,
// how many must stay healthy, how many are healthy now, and so how many
// may be disrupted. The API server's pods/eviction subresource (used by
// `kubectl drain`) refuses an eviction when disruptionsAllowed is 0, and
// takes one disruption from the status when it allows one.
//
// It all lives in controller.go: New registers the informer handlers, Run
// runs the workers until ctx ends, sync does one item.
package disruption

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/internal/podcondition"
)

// deletionTimeout: a pod the API server let go (disruptedPods) counts as
// gone for this long even if its deletion has not been seen yet, as in
// Kubernetes; after it, the eviction is assumed to have failed.
const deletionTimeout = 2 * time.Minute

// ControllerName is the name the controller manager runs this controller
// by, and the key of its service account
// (bootstrappolicy.ControllerServiceAccounts).
const ControllerName = "disruption"

// DefaultWorkers: Kubernetes' disruption controller has no flag for it and
// runs one worker; each sync is a few cache reads and one status write.
const DefaultWorkers = 1

// Options tune the controller: Workers, 0 meaning DefaultWorkers.
type Options = controller.Options

// Controller computes PodDisruptionBudget status.
type Controller struct {
	client *client.Client
	pdbs   *client.Informer
	pods   *client.Informer
	// scales answer "how many pods should this controller have?" for
	// budgets given as a percentage or as maxUnavailable.
	rsets, rcs, deploys *client.Informer
	queue               *workqueue.Queue[string] // budget keys
	workers             int
	log                 *slog.Logger
	clock               clock.PassiveClock // "now" for disruptedPods' deletionTimeout
}

// New is the disruption controller on d's shared informers; it registers
// its handlers, so call it before they run.
func New(d controller.Deps, o Options) *Controller {
	inf := d.Informers
	ctrl := &Controller{client: d.Client, pdbs: inf.For(client.PodDisruptionBudgets), pods: inf.For(client.Pods),
		rsets: inf.For(client.ReplicaSets), rcs: inf.For(client.ReplicationControllers), deploys: inf.For(client.Deployments),
		queue: workqueue.NewNamed[string](d.Clock, ControllerName, d.QueueMetrics), workers: o.WorkersOr(DefaultWorkers),
		log: d.Log.With("controller", ControllerName), clock: d.Clock}
	ctrl.pods.Cache().AddIndex(client.IndexByNamespace, client.NamespaceIndex)
	ctrl.pdbs.Cache().AddIndex(client.IndexByNamespace, client.NamespaceIndex)
	ctrl.pdbs.AddHandler(client.Handler{
		OnAdd:    func(obj runtime.Object) { ctrl.queue.Add(client.KeyOf(obj)) },
		OnUpdate: func(_, obj runtime.Object) { ctrl.queue.Add(client.KeyOf(obj)) },
	})
	ctrl.pods.AddHandler(client.Handler{
		OnAdd:    func(obj runtime.Object) { ctrl.enqueueBudgetsOf(obj.(*corev1.Pod)) },
		OnUpdate: func(old, obj runtime.Object) { ctrl.enqueueBudgetsOf(old.(*corev1.Pod), obj.(*corev1.Pod)) },
		OnDelete: func(obj runtime.Object) { ctrl.enqueueBudgetsOf(obj.(*corev1.Pod)) },
	})
	return ctrl
}

func (c *Controller) enqueueBudgetsOf(pods ...*corev1.Pod) {
	for _, obj := range c.pdbs.Cache().ByIndex(client.IndexByNamespace, pods[0].Namespace) {
		pdb := obj.(*policyv1.PodDisruptionBudget)
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil {
			continue
		}
		for _, p := range pods {
			if sel.Matches(labels.Set(p.Labels)) {
				c.queue.Add(client.KeyOf(pdb))
				break
			}
		}
	}
}

// Run starts the workers and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	client.RunWorkers(ctx, c.queue, c.workers, c.sync, c.log, "pdb", c.pdbs, c.pods, c.rsets, c.rcs, c.deploys)
}

// sync recomputes one budget's status.
func (c *Controller) sync(ctx context.Context, key string) error {
	obj, ok := c.pdbs.Cache().Get(key)
	if !ok {
		return nil
	}
	pdb := obj.(*policyv1.PodDisruptionBudget)
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		return nil // an invalid selector cannot be fixed by retrying
	}
	var pods []*corev1.Pod
	for _, o := range c.pods.Cache().ByIndex(client.IndexByNamespace, pdb.Namespace) {
		pod := o.(*corev1.Pod)
		if !sel.Empty() && sel.Matches(labels.Set(pod.Labels)) {
			pods = append(pods, pod)
		}
	}
	expected, desired, err := c.expectations(pdb, pods)
	if err != nil {
		return err
	}
	now := c.clock.Now()
	disrupted, recheck := stillDisrupted(pdb.Status.DisruptedPods, pods, now)
	healthy := 0
	for _, p := range pods {
		if _, gone := disrupted[p.Name]; !gone && p.DeletionTimestamp == nil && podcondition.IsReady(p) {
			healthy++
		}
	}
	st := policyv1.PodDisruptionBudgetStatus{
		ObservedGeneration: pdb.Generation, DisruptedPods: disrupted,
		ExpectedPods: int32(expected), DesiredHealthy: int32(desired), CurrentHealthy: int32(healthy),
		DisruptionsAllowed: int32(max(0, healthy-desired)), Conditions: pdb.Status.Conditions,
	}
	cond := metav1.Condition{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionTrue,
		Reason: policyv1.SufficientPodsReason, ObservedGeneration: pdb.Generation, LastTransitionTime: metav1.NewTime(now)}
	if st.DisruptionsAllowed == 0 {
		cond.Status, cond.Reason = metav1.ConditionFalse, policyv1.InsufficientPodsReason
	}
	meta.SetStatusCondition(&st.Conditions, cond)
	if recheck > 0 {
		c.queue.AddAfter(key, recheck)
	}
	if equality.Semantic.DeepEqual(st, pdb.Status) {
		return nil
	}
	next := pdb.DeepCopy()
	next.Status = st
	if err := c.client.UpdateStatus(ctx, client.PodDisruptionBudgets, pdb.Namespace, pdb.Name, next, nil); err != nil {
		return fmt.Errorf("update status of %s: %w", key, err)
	}
	c.log.Info("updated budget", "pdb", key, "expected", expected, "desiredHealthy", desired, "currentHealthy", healthy,
		"disruptionsAllowed", st.DisruptionsAllowed)
	return nil
}

// expectations returns how many pods the budget covers and how many must
// stay healthy. minAvailable as a number needs only the pods themselves;
// a percentage or maxUnavailable is relative to how many pods their
// controllers want (their scale), as in Kubernetes.
func (c *Controller) expectations(pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod) (expected, desired int, err error) {
	minAvail, maxUnavail := pdb.Spec.MinAvailable, pdb.Spec.MaxUnavailable
	if maxUnavail == nil && minAvail != nil && minAvail.Type == intstr.Int {
		return len(pods), minAvail.IntValue(), nil
	}
	expected = c.scaleOf(pods)
	switch {
	case maxUnavail != nil:
		n, err := intstr.GetScaledValueFromIntOrPercent(maxUnavail, expected, true)
		return expected, max(0, expected-n), err
	case minAvail != nil:
		n, err := intstr.GetScaledValueFromIntOrPercent(minAvail, expected, true)
		return expected, n, err
	}
	return expected, expected, nil // no field: nothing may be disrupted
}

// scaleOf sums the desired replicas of the controllers of these pods; a
// pod without a controller counts as one.
func (c *Controller) scaleOf(pods []*corev1.Pod) int {
	seen := map[string]bool{}
	total := 0
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil {
			total++
			continue
		}
		id := ref.Kind + "/" + p.Namespace + "/" + ref.Name
		if seen[id] {
			continue
		}
		seen[id] = true
		total += c.replicasOf(p.Namespace, ref)
	}
	return total
}

func (c *Controller) replicasOf(ns string, ref *metav1.OwnerReference) int {
	key := ns + "/" + ref.Name
	switch ref.Kind {
	case "ReplicaSet":
		obj, ok := c.rsets.Cache().Get(key)
		if !ok {
			return 0
		}
		rs := obj.(*appsv1.ReplicaSet)
		// A Deployment's ReplicaSets share its scale.
		if owner := metav1.GetControllerOf(rs); owner != nil && owner.Kind == "Deployment" {
			if d, ok := c.deploys.Cache().Get(ns + "/" + owner.Name); ok {
				return int(*d.(*appsv1.Deployment).Spec.Replicas)
			}
		}
		return int(*rs.Spec.Replicas)
	case "ReplicationController":
		if obj, ok := c.rcs.Cache().Get(key); ok {
			return int(*obj.(*corev1.ReplicationController).Spec.Replicas)
		}
	}
	return 1
}

// stillDisrupted keeps the evicted pods that have not gone yet and are
// within deletionTimeout; it returns when to look again.
func stillDisrupted(in map[string]metav1.Time, pods []*corev1.Pod, now time.Time) (map[string]metav1.Time, time.Duration) {
	present := map[string]bool{}
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			present[p.Name] = true
		}
	}
	var out map[string]metav1.Time
	recheck := time.Duration(math.MaxInt64)
	for name, t := range in {
		left := t.Add(deletionTimeout).Sub(now)
		if !present[name] || left <= 0 {
			continue
		}
		if out == nil {
			out = map[string]metav1.Time{}
		}
		out[name] = t
		recheck = min(recheck, left)
	}
	if out == nil {
		return nil, 0
	}
	return out, recheck
}
