package protection

import (
	"context"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/storage/ephemeral"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/controllermanager/persistentvolume"
	"github.com/mkube/mkube/internal/storagepolicy"
)

// ClaimController keeps claims that pods use: the pvc-protection
// controller.
type ClaimController struct {
	client *client.Client
	claims *client.Informer
	pods   *client.Informer         // indexed by persistentvolume.IndexPodsByClaim
	queue  *workqueue.Queue[string] // claim keys
	log    *slog.Logger
}

// NewClaimController is the pvc-protection controller on d's shared
// informers of claims and pods; call it before they run.
func NewClaimController(d controller.Deps) *ClaimController {
	c := &ClaimController{client: d.Client, claims: d.Informers.For(client.PersistentVolumeClaims), pods: d.Informers.For(client.Pods),
		queue: workqueue.NewNamed[string](d.Clock, ClaimControllerName, d.QueueMetrics), log: d.Log.With("controller", ClaimControllerName)}
	c.pods.Cache().AddIndex(persistentvolume.IndexPodsByClaim, persistentvolume.PodClaimIndex)
	c.claims.AddHandler(client.Handler{
		OnAdd:    c.claimChanged,
		OnUpdate: func(_, obj runtime.Object) { c.claimChanged(obj) },
	})
	c.pods.AddHandler(client.Handler{
		OnAdd: func(obj runtime.Object) { c.podChanged(obj.(*corev1.Pod), false) },
		OnUpdate: func(old, obj runtime.Object) {
			c.podChanged(obj.(*corev1.Pod), false)
			if o := old.(*corev1.Pod); o.UID != obj.(*corev1.Pod).UID {
				c.podChanged(o, true) // a pod deleted and made again under its name
			}
		},
		OnDelete: func(obj runtime.Object) { c.podChanged(obj.(*corev1.Pod), true) },
	})
	return c
}

func (c *ClaimController) claimChanged(obj runtime.Object) {
	pvc := obj.(*corev1.PersistentVolumeClaim)
	if needsFinalizer(pvc, storagepolicy.ClaimProtectionFinalizer) || deletionCandidate(pvc, storagepolicy.ClaimProtectionFinalizer) {
		c.queue.Add(client.KeyOf(pvc))
	}
}

// podChanged queues the claims of a pod that may have stopped using them:
// deleted, finished, or not on a node.
func (c *ClaimController) podChanged(pod *corev1.Pod, deleted bool) {
	if !deleted && !persistentvolume.IsPodTerminated(pod) && pod.Spec.NodeName != "" {
		return
	}
	for _, key := range persistentvolume.PodClaimIndex(pod) {
		c.queue.Add(key)
	}
}

// Run syncs with one worker, as Kubernetes, and blocks until ctx ends.
func (c *ClaimController) Run(ctx context.Context) {
	client.RunWorkers(ctx, c.queue, 1, c.sync, c.log, "claim", c.claims, c.pods)
}

// sync lets a deleted claim go once no pod uses it, and gives the
// finalizer to a claim without it. Errors are retried.
func (c *ClaimController) sync(ctx context.Context, key string) error {
	obj, ok := c.claims.Cache().Get(key)
	if !ok {
		return nil
	}
	pvc := obj.(*corev1.PersistentVolumeClaim).DeepCopy()
	switch {
	case deletionCandidate(pvc, storagepolicy.ClaimProtectionFinalizer):
		if used, err := c.inUse(ctx, pvc); err != nil || used {
			if used {
				c.log.Info("keeping the claim: a pod uses it", "claim", key)
			}
			return err
		}
		if err := updateFinalizers(ctx, pvc, storagepolicy.ClaimProtectionFinalizer, false, c.update); err != nil {
			return err
		}
		c.log.Info("removed the protection finalizer of a claim no pod uses", "claim", key)
	case needsFinalizer(pvc, storagepolicy.ClaimProtectionFinalizer):
		return updateFinalizers(ctx, pvc, storagepolicy.ClaimProtectionFinalizer, true, c.update)
	}
	return nil
}

func (c *ClaimController) update(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	return c.client.Update(ctx, client.PersistentVolumeClaims, pvc.Namespace, pvc.Name, pvc, nil)
}

// inUse asks the pods' cache, and if it knows no user, the API server: a
// pod just created may not be in the cache yet, and deleting a claim a
// pod is about to use would lose its data.
func (c *ClaimController) inUse(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (bool, error) {
	for _, obj := range c.pods.Cache().ByIndex(persistentvolume.IndexPodsByClaim, client.KeyOf(pvc)) {
		if podUses(obj.(*corev1.Pod), pvc) {
			return true, nil
		}
	}
	var list corev1.PodList
	if err := c.client.List(ctx, client.Pods, pvc.Namespace, client.ListOptions{}, &list); err != nil {
		return false, err
	}
	for i := range list.Items {
		if podUses(&list.Items[i], pvc) {
			return true, nil
		}
	}
	return false, nil
}

// podUses is Kubernetes' podUsesPVC: a pod on a node whose volumes name
// the claim, whatever its phase (it may start again); a pod's ephemeral
// claim only until the kubelet is done with the pod.
func podUses(pod *corev1.Pod, pvc *corev1.PersistentVolumeClaim) bool {
	if pod.Spec.NodeName == "" || pod.Namespace != pvc.Namespace {
		return false
	}
	shutDown := pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds == 0
	for i, v := range pod.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == pvc.Name:
			return true
		case v.Ephemeral != nil && !shutDown && ephemeral.VolumeClaimName(pod, &pod.Spec.Volumes[i]) == pvc.Name &&
			ephemeral.VolumeIsForPod(pod, pvc) == nil:
			return true
		}
	}
	return false
}
