package persistentvolume

import (
	"context"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/controllermanager/persistentvolume/volumeplugin"
)

// The reasons of the controller's events, Kubernetes' own
// (pkg/controller/volume/events).
const (
	ReasonFailedBinding              = "FailedBinding"
	ReasonVolumeMismatch             = "VolumeMismatch"
	ReasonVolumeFailedRecycle        = "VolumeFailedRecycle"
	ReasonVolumeRecycled             = "VolumeRecycled"
	ReasonRecyclerPod                = "RecyclerPod"
	ReasonVolumeFailedDelete         = "VolumeFailedDelete"
	ReasonExternalProvisioning       = "ExternalProvisioning"
	ReasonProvisioningFailed         = "ProvisioningFailed"
	ReasonProvisioningCleanupFailed  = "ProvisioningCleanupFailed"
	ReasonProvisioningSucceeded      = "ProvisioningSucceeded"
	ReasonWaitForFirstConsumer       = "WaitForFirstConsumer"
	ReasonWaitForPodScheduled        = "WaitForPodScheduled"
	ReasonVolumeUnknownReclaimPolicy = "VolumeUnknownReclaimPolicy"
	ReasonClaimLost                  = "ClaimLost"
	ReasonClaimMisbound              = "ClaimMisbound"
)

// inTreeDeleteFinalizer keeps a provisioned volume whose policy is Delete
// until its storage is deleted, even if the volume object is deleted first
// (Kubernetes' HonorPVReclaimPolicy).
const inTreeDeleteFinalizer = "kubernetes.io/pv-controller"

// binder is the controller's logic: the sync of one claim or volume, on
// its stores, writing through api. Controller feeds it from informers and
// a queue; the tests call it directly.
type binder struct {
	api     api
	volumes *store[*corev1.PersistentVolume]
	claims  *store[*corev1.PersistentVolumeClaim]
	classes lister // StorageClasses, by name
	pods    lister // indexed by IndexPodsByClaim
	nodes   lister
	host    volumeplugin.Host
	rec     recorder
	clock   clock.PassiveClock
	log     *slog.Logger
	enqueue func(item) // to sync another object soon (the Controller's queue)
}

// itemKind says what a queued key names.
type itemKind string

const (
	claimItem  itemKind = "claim"  // key "namespace/name"
	volumeItem itemKind = "volume" // key "name"
)

// item is one object to sync.
type item struct {
	kind itemKind
	key  string
}

func (i item) String() string { return string(i.kind) + " " + i.key }

// sync syncs the object named by it as it is in the stores now. An object
// gone from its store was deleted: the delete handler queued what that
// affects, there is nothing left to do for it.
func (b *binder) sync(ctx context.Context, it item) error {
	switch it.kind {
	case claimItem:
		if claim, ok := b.claims.get(it.key); ok {
			return b.syncClaim(ctx, claim)
		}
	case volumeItem:
		if volume, ok := b.volumes.get(it.key); ok {
			return b.syncVolume(ctx, volume)
		}
	}
	return nil
}

// event records an event about a claim or a volume.
func (b *binder) event(obj object, eventType, reason, message string) {
	b.rec.Event(eventObject(obj), eventType, reason, "%s", message)
}

// eventObject is what an event needs of obj, with its kind (which objects
// from a list or a cache may not carry).
func eventObject(obj object) runtime.Object {
	meta := metav1.ObjectMeta{Name: obj.GetName(), Namespace: obj.GetNamespace(), UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion()}
	if _, ok := obj.(*corev1.PersistentVolume); ok {
		return &corev1.PersistentVolume{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"}, ObjectMeta: meta}
	}
	return &corev1.PersistentVolumeClaim{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"}, ObjectMeta: meta}
}

// class returns a StorageClass, or Kubernetes' NotFound error for it
// (`storageclass.storage.k8s.io "fast" not found`).
func (b *binder) class(name string) (*storagev1.StorageClass, error) {
	obj, ok := b.classes.Get(name)
	if !ok {
		return nil, apierrors.NewNotFound(storagev1.Resource("storageclass"), name)
	}
	return obj.(*storagev1.StorageClass), nil
}

// classLister is the StorageClass lister the component-helpers functions
// take (IsDelayBindingMode), over the classes' cache.
type classLister struct{ b *binder }

func (l classLister) List(sel labels.Selector) ([]*storagev1.StorageClass, error) {
	var out []*storagev1.StorageClass
	for _, obj := range l.b.classes.List() {
		if sc := obj.(*storagev1.StorageClass); sel.Matches(labels.Set(sc.Labels)) {
			out = append(out, sc)
		}
	}
	return out, nil
}

func (l classLister) Get(name string) (*storagev1.StorageClass, error) { return l.b.class(name) }

// claimKey is a claim's store key, as its volume's claimRef names it.
func claimKey(ref *corev1.ObjectReference) string { return ref.Namespace + "/" + ref.Name }
