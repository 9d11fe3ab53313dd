package daemon

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/seedstep"
)

// burstReplicas caps the pods created, and those deleted, in one sync, so
// one DaemonSet on a huge cluster cannot monopolise the API server
// (Kubernetes' BurstReplicas).
const burstReplicas = 250

// nodeWork is what one node needs: a pod created there, pods deleted.
type nodeWork struct {
	create bool
	delete []*corev1.Pod
}

// podsShouldBeOnNode decides one node (Kubernetes' podsShouldBeOnNode):
//
//   - it should run a daemon pod and has none: create one;
//   - its pods may continue: delete the failed ones (at most once per
//     back-off delay, with a FailedDaemonPod event) and the succeeded ones,
//     and the manage loop creates their replacement next time; keep one
//     running pod (the oldest), or, while surging, one of the current
//     template and one old one until the new one is available;
//   - its pods may not continue (the node stopped fitting): delete them all.
func (c *Controller) podsShouldBeOnNode(node *corev1.Node, pods []*corev1.Pod, ds *appsv1.DaemonSet, hash string, p placement) nodeWork {
	shouldRun, shouldContinue := p.check(node)
	var w nodeWork
	switch {
	case shouldRun && len(pods) == 0:
		w.create = true
	case shouldContinue:
		var running []*corev1.Pod
		for _, pod := range pods {
			switch {
			case pod.DeletionTimestamp != nil:
			case pod.Status.Phase == corev1.PodFailed:
				// The kubelet and the controller can fight here (a pod
				// the kubelet rejects, recreated at once): back off.
				key := fmt.Sprintf("%s/%d/%s", ds.UID, ds.Status.ObservedGeneration, node.Name)
				if in, delay := c.backoff.inBackoff(key); in {
					c.log.Info("deleting failed pod is limited by back-off", "daemonset", client.KeyOf(ds), "pod", client.KeyOf(pod), "node", node.Name, "delay", delay)
					c.queue.AddAfter(client.KeyOf(ds), delay)
					continue
				}
				c.backoff.next(key)
				c.log.Info("found failed daemon pod, deleting it", "daemonset", client.KeyOf(ds), "pod", client.KeyOf(pod), "node", node.Name)
				c.rec.Event(ds, corev1.EventTypeWarning, ReasonFailedDaemonPod, "Found failed daemon pod %s/%s on node %s, will try to kill it", pod.Namespace, pod.Name, node.Name)
				w.delete = append(w.delete, pod)
			case pod.Status.Phase == corev1.PodSucceeded:
				c.rec.Event(ds, corev1.EventTypeNormal, ReasonSucceededDaemonPod, "Found succeeded daemon pod %s/%s on node %s, will try to delete it", pod.Namespace, pod.Name, node.Name)
				w.delete = append(w.delete, pod)
			default:
				running = append(running, pod)
			}
		}
		slices.SortFunc(running, byAge)
		if !allowsSurge(ds) {
			// One pod per node: the oldest stays.
			if len(running) > 1 {
				w.delete = append(w.delete, running[1:]...)
			}
			break
		}
		if len(running) == 0 {
			w.create = shouldRun // surging, a node needs one live pod
			break
		}
		w.delete = append(w.delete, surgeExcess(running, hash, ds, c.now())...)
	case len(pods) > 0:
		for _, pod := range pods {
			if pod.DeletionTimestamp == nil {
				w.delete = append(w.delete, pod)
			}
		}
	}
	return w
}

// surgeExcess, for a node of a surging DaemonSet, keeps the oldest pod of
// the current template and the oldest old one, and returns the others;
// the old one goes too once it is not ready (it will not be missed) or
// the new one is available (it has been replaced).
func surgeExcess(running []*corev1.Pod, hash string, ds *appsv1.DaemonSet, now metav1.Time) []*corev1.Pod {
	var excess []*corev1.Pod
	var newest, oldest *corev1.Pod // the oldest pod of the current, and of an old, template
	for _, pod := range running {
		switch {
		case pod.Labels[hashLabel] == hash && newest == nil:
			newest = pod
		case pod.Labels[hashLabel] != hash && oldest == nil:
			oldest = pod
		default:
			excess = append(excess, pod)
		}
	}
	if newest != nil && oldest != nil {
		if ready := isAvailable(oldest, 0, now); !ready || isAvailable(newest, ds.Spec.MinReadySeconds, now) {
			excess = append(excess, oldest)
		}
	}
	return excess
}

// manage creates the missing daemon pods and deletes the superfluous
// ones, node by node, then deletes the unbound pods of nodes that no
// longer exist (which the scheduler can never place).
func (c *Controller) manage(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, hash string) error {
	byNode, err := c.nodesToDaemonPods(ctx, ds, false)
	if err != nil {
		return fmt.Errorf("map nodes to daemon pods of %s: %w", client.KeyOf(ds), err)
	}
	p := placementOf(ds)
	var create []string
	var del []*corev1.Pod
	exists := map[string]bool{}
	for _, node := range nodes {
		exists[node.Name] = true
		w := c.podsShouldBeOnNode(node, byNode[node.Name], ds, hash, p)
		if w.create {
			create = append(create, node.Name)
		}
		del = append(del, w.delete...)
	}
	for node, pods := range byNode {
		if exists[node] {
			continue
		}
		for _, pod := range pods {
			if pod.Spec.NodeName == "" {
				del = append(del, pod)
			}
		}
	}
	return c.syncNodes(ctx, ds, del, create, hash)
}

// syncNodes deletes the given pods and creates a daemon pod on each of
// the given nodes. The expectations are set first, so that the pods'
// events, which may come back before the requests return, are counted.
// Creations go in batches of 1, 2, 4, ... and stop at the first batch
// with a failure: a quota or a bad template is learnt from one request,
// not hundreds (Kubernetes' slow start).
func (c *Controller) syncNodes(ctx context.Context, ds *appsv1.DaemonSet, del []*corev1.Pod, createOn []string, hash string) error {
	key := client.KeyOf(ds)
	createOn = createOn[:min(len(createOn), burstReplicas)]
	del = del[:min(len(del), burstReplicas)]
	if len(createOn)+len(del) == 0 {
		return nil
	}
	delKeys := make([]string, len(del))
	for i, pod := range del {
		delKeys[i] = client.KeyOf(pod)
	}
	c.exp.Expect(key, len(createOn), delKeys)

	var errs []error
	if len(createOn) > 0 {
		c.log.Info("nodes need daemon pods, creating", seedstep.Key, seedstep.ControllerCreatesPods, "daemonset", key, "nodes", createOn)
		tmpl := podTemplate(ds, hash)
		created := 0
		for batch := 1; created < len(createOn); batch *= 2 {
			nodes := createOn[created:min(created+batch, len(createOn))]
			failed := c.createBatch(ctx, ds, tmpl, nodes)
			created += len(nodes)
			if len(failed) > 0 {
				errs = append(errs, failed...)
				for range len(createOn) - created {
					c.exp.CreationObserved(key) // skipped: never going to arrive
				}
				break
			}
		}
	}
	if len(del) > 0 {
		c.log.Info("deleting daemon pods", "daemonset", key, "pods", delKeys)
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, pod := range del {
			wg.Go(func() {
				if err := c.deletePod(ctx, ds, pod); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
	return errors.Join(errs...)
}

// createBatch creates one pod on each node at once and returns the errors.
func (c *Controller) createBatch(ctx context.Context, ds *appsv1.DaemonSet, tmpl *corev1.PodTemplateSpec, nodes []string) []error {
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, node := range nodes {
		wg.Go(func() { errs[i] = c.createPod(ctx, ds, tmpl, node) })
	}
	wg.Wait()
	var failed []error
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err)
		}
	}
	return failed
}

func (c *Controller) createPod(ctx context.Context, ds *appsv1.DaemonSet, tmpl *corev1.PodTemplateSpec, node string) error {
	key := client.KeyOf(ds)
	pod := newPod(ds, tmpl, node)
	if err := c.client.Create(ctx, client.Pods, ds.Namespace, pod, pod); err != nil {
		c.exp.CreationObserved(key) // never going to arrive
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil // the namespace is going, and the DaemonSet with it
		}
		c.rec.Event(ds, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating: %v", err)
		return fmt.Errorf("create daemon pod for node %s: %w", node, err)
	}
	c.log.Info("created pod", seedstep.Key, seedstep.ControllerCreatesPods, "daemonset", key, "pod", client.KeyOf(pod), "node", node)
	c.rec.Event(ds, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created pod: %s", pod.Name)
	return nil
}

func (c *Controller) deletePod(ctx context.Context, ds *appsv1.DaemonSet, pod *corev1.Pod) error {
	key := client.KeyOf(ds)
	err := c.client.Delete(ctx, client.Pods, pod.Namespace, pod.Name, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}})
	if err != nil {
		c.exp.DeletionObserved(key, client.KeyOf(pod)) // never going to arrive (or already did)
		if apierrors.IsNotFound(err) {
			return nil // gone already: what we wanted
		}
		c.rec.Event(ds, corev1.EventTypeWarning, ReasonFailedDelete, "Error deleting: %v", err)
		return fmt.Errorf("delete daemon pod %s: %w", client.KeyOf(pod), err)
	}
	c.log.Info("deleted pod", "daemonset", key, "pod", client.KeyOf(pod), "node", pod.Spec.NodeName)
	c.rec.Event(ds, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted pod: %s", pod.Name)
	return nil
}

func (c *Controller) now() metav1.Time { return metav1.NewTime(c.clock.Now()) }
