package daemon

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/controller"
)

// daemonPods returns the pods the DaemonSet controls, after the
// ControllerRefManager rules (controller.PodClaim): an orphan the selector
// matches is adopted, after a fresh read says the DaemonSet is not being
// deleted; an owned pod whose labels no longer match is released
// (`kubectl label pod x name-` takes a pod out, and the DaemonSet makes
// another for its node). Terminal pods are included.
func (c *Controller) daemonPods(ctx context.Context, ds *appsv1.DaemonSet) ([]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return nil, err
	}
	return controller.PodClaim{Client: c.client, Pods: c.pods.Cache(), Owner: ds, Kind: controllerKind, Selector: sel,
		CanAdopt: c.canAdopt(ds), Log: c.log}.Claim(ctx)
}

// canAdopt is asked before the first adoption of a pod or a revision.
func (c *Controller) canAdopt(ds *appsv1.DaemonSet) func(context.Context) error {
	return controller.RecheckDeletion(c.client, client.DaemonSets, ds)
}

// nodesToDaemonPods groups the DaemonSet's pods by the node they are for.
// A pod that is both terminal and being deleted is left out: the kubelet
// or the pod GC is finishing it and nothing is left to decide, unless
// withDeletedTerminal (history cleanup keeps the revisions such pods
// still run).
func (c *Controller) nodesToDaemonPods(ctx context.Context, ds *appsv1.DaemonSet, withDeletedTerminal bool) (map[string][]*corev1.Pod, error) {
	pods, err := c.daemonPods(ctx, ds)
	if err != nil {
		return nil, err
	}
	out := map[string][]*corev1.Pod{}
	for _, pod := range pods {
		if !withDeletedTerminal && isTerminal(pod) && pod.DeletionTimestamp != nil {
			continue
		}
		node, err := targetNode(pod)
		if err != nil {
			continue // an adopted pod for no node: nothing to place
		}
		out[node] = append(out[node], pod)
	}
	return out, nil
}
