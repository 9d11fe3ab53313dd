package daemon

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mkube/mkube/client"
)

// rollingUpdate replaces the pods of old templates within the bounds of
// spec.updateStrategy.rollingUpdate (Kubernetes' rollingUpdate). It only
// deletes old pods, or creates new ones beside them; the manage loop of
// the next sync creates the replacements of what it deleted.
func (c *Controller) rollingUpdate(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, hash string) error {
	byNode, err := c.nodesToDaemonPods(ctx, ds, false)
	if err != nil {
		return fmt.Errorf("map nodes to daemon pods of %s: %w", client.KeyOf(ds), err)
	}
	p := placementOf(ds)
	shouldRun := map[string]bool{}
	desired := 0
	for _, node := range nodes {
		if run, _ := p.check(node); run {
			shouldRun[node.Name] = true
			desired++
			if _, ok := byNode[node.Name]; !ok {
				byNode[node.Name] = nil // a node to fill counts as unavailable
			}
		}
	}
	maxSurge, maxUnavailable, err := updateBounds(ds, desired)
	if err != nil {
		return err
	}
	plan := planRollingUpdate(ds, byNode, hash, maxSurge, maxUnavailable, desired, func(n string) bool { return shouldRun[n] }, c.now())
	if len(plan.delete)+len(plan.createOn) > 0 {
		c.log.Info("rolling update", "daemonset", client.KeyOf(ds), "revision", hash, "maxSurge", maxSurge, "maxUnavailable", maxUnavailable,
			"deleting", len(plan.delete), "surgingOnto", plan.createOn)
	}
	return c.syncNodes(ctx, ds, plan.delete, plan.createOn, hash)
}

// updateBounds turns maxSurge and maxUnavailable into pod counts out of
// the desired number, rounding percentages up (so 10% of 3 nodes is 1).
// With both zero — only possible when every percentage rounds to 0 of 0
// nodes, or for an object stored before validation — one pod may be
// unavailable, or the update could never progress.
//
// Worked example: 5 desired nodes, maxUnavailable "30%": ⌈1.5⌉ = 2 old
// pods are deleted at once; maxSurge "20%": ⌈1⌉ = 1 new pod beside an old one.
func updateBounds(ds *appsv1.DaemonSet, desired int) (maxSurge, maxUnavailable int, err error) {
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType || ru == nil {
		return 0, 0, nil
	}
	if ru.MaxUnavailable != nil {
		if maxUnavailable, err = intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, desired, true); err != nil {
			return 0, 0, fmt.Errorf("invalid value for maxUnavailable: %w", err)
		}
	}
	if ru.MaxSurge != nil {
		if maxSurge, err = intstr.GetScaledValueFromIntOrPercent(ru.MaxSurge, desired, true); err != nil {
			return 0, 0, fmt.Errorf("invalid value for maxSurge: %w", err)
		}
	}
	if desired > 0 && maxUnavailable == 0 && maxSurge == 0 {
		maxUnavailable = 1
	}
	return maxSurge, maxUnavailable, nil
}

// allowsSurge: the DaemonSet may run two pods on a node during an update.
func allowsSurge(ds *appsv1.DaemonSet) bool {
	surge, _, err := updateBounds(ds, 1)
	return err == nil && surge > 0
}

// rollingPlan is what one step of a rolling update does.
type rollingPlan struct {
	delete   []*corev1.Pod
	createOn []string // nodes that get a new pod beside their old one
}

// planRollingUpdate is the arithmetic of one step, node by node in name
// order (byNode has an entry, maybe empty, for every node that should run
// a pod).
//
// Without surge (maxUnavailable > 0), old pods are deleted while the
// unavailable count stays within maxUnavailable:
//
//	unavailable = nodes without a pod, or with two, or whose one pod is
//	              new but not yet available, or old and not available
//	delete      = every old unavailable pod (it is not serving anyway)
//	            + up to maxUnavailable − unavailable old available pods
//
// Worked example: 4 nodes, maxUnavailable 1, all pods old and available:
// one is deleted; the next step sees its node empty (unavailable 1) and
// deletes nothing until the new pod there is available.
//
// With surge (maxSurge > 0, maxUnavailable 0), new pods are created
// beside old ones, at most maxSurge waiting to become available, and the
// old pod of a node goes once its new one is available:
//
//	surging     = nodes whose new pod is not available yet (or with excess pods)
//	createOn    = every node whose old pod is not available (it is not serving)
//	            + up to maxSurge − surging nodes with an available old pod
//	delete      = old pods whose node has an available new pod, old
//	              unavailable pods of nodes that should no longer run one,
//	              and, once more pods are available than desired, old pods of
//	              nodes that should no longer run one.
func planRollingUpdate(ds *appsv1.DaemonSet, byNode map[string][]*corev1.Pod, hash string,
	maxSurge, maxUnavailable, desired int, shouldRun func(node string) bool, now metav1.Time) rollingPlan {
	names := make([]string, 0, len(byNode))
	for n := range byNode {
		names = append(names, n)
	}
	slices.Sort(names)
	available := func(p *corev1.Pod) bool { return isAvailable(p, ds.Spec.MinReadySeconds, now) }
	var plan rollingPlan

	if maxSurge == 0 {
		unavailable := 0
		var candidates []*corev1.Pod
		for _, n := range names {
			newPod, oldPod, ok := updatedPodsOnNode(ds, byNode[n], hash)
			switch {
			case !ok: // excess pods: the manage loop prunes them first
				unavailable++
			case (oldPod == nil) == (newPod == nil): // none, or both: the manage loop acts
				unavailable++
			case newPod != nil:
				if !available(newPod) {
					unavailable++
				}
			case !available(oldPod):
				plan.delete = append(plan.delete, oldPod)
				unavailable++
			case unavailable < maxUnavailable:
				candidates = append(candidates, oldPod)
			}
		}
		room := min(max(maxUnavailable-unavailable, 0), len(candidates))
		plan.delete = append(plan.delete, candidates[:room]...)
		return plan
	}

	surging, availableNodes := 0, 0
	var candidates []string
	var notWanted []*corev1.Pod // available old pods of nodes that should no longer run one
	for _, n := range names {
		newPod, oldPod, ok := updatedPodsOnNode(ds, byNode[n], hash)
		if !ok {
			surging++
			continue
		}
		if (oldPod != nil && available(oldPod)) || (oldPod == nil && newPod != nil && available(newPod)) {
			availableNodes++
		}
		switch {
		case oldPod == nil: // nothing old here; the manage loop fills an empty node
		case newPod == nil && !available(oldPod):
			if !shouldRun(n) {
				plan.delete = append(plan.delete, oldPod)
				continue
			}
			plan.createOn = append(plan.createOn, n)
		case newPod == nil:
			if !shouldRun(n) {
				notWanted = append(notWanted, oldPod)
				continue
			}
			if surging < maxSurge {
				candidates = append(candidates, n)
			}
		case !available(newPod):
			surging++
		default:
			plan.delete = append(plan.delete, oldPod) // replaced
		}
	}
	// With surge the owner wants every desired node served: a pod on a
	// node that no longer fits goes only once enough pods elsewhere are
	// available to take over.
	if extra := availableNodes - desired; extra > 0 {
		plan.delete = append(plan.delete, notWanted[:min(extra, len(notWanted))]...)
	}
	room := min(max(maxSurge-surging, 0), len(candidates))
	plan.createOn = append(plan.createOn, candidates[:room]...)
	return plan
}

// updatedPodsOnNode splits a node's live pods into the one of the current
// template and the one of an old template; ok is false if either has
// more than one, which the manage loop prunes before the update goes on.
func updatedPodsOnNode(ds *appsv1.DaemonSet, pods []*corev1.Pod, hash string) (newPod, oldPod *corev1.Pod, ok bool) {
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if isUpdated(pod, hash, ds) {
			if newPod != nil {
				return nil, nil, false
			}
			newPod = pod
		} else {
			if oldPod != nil {
				return nil, nil, false
			}
			oldPod = pod
		}
	}
	return newPod, oldPod, true
}
