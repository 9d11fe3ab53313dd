package persistentvolume

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/client"
)

// api is what the controller writes, and reads past its caches: the API
// server through the client in the controller manager, an in-memory
// server in the unit tests and the benchmark.
type api interface {
	GetVolume(ctx context.Context, name string) (*corev1.PersistentVolume, error)
	CreateVolume(ctx context.Context, pv *corev1.PersistentVolume) (*corev1.PersistentVolume, error)
	UpdateVolume(ctx context.Context, pv *corev1.PersistentVolume) (*corev1.PersistentVolume, error)
	UpdateVolumeStatus(ctx context.Context, pv *corev1.PersistentVolume) (*corev1.PersistentVolume, error)
	DeleteVolume(ctx context.Context, name string) error
	GetClaim(ctx context.Context, namespace, name string) (*corev1.PersistentVolumeClaim, error)
	UpdateClaim(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, error)
	UpdateClaimStatus(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, error)
}

// lister reads an informer's cache (a map in the tests).
type lister interface {
	Get(key string) (runtime.Object, bool)
	ByIndex(index, value string) []runtime.Object
	List() []runtime.Object
}

// recorder posts events (client/record's Recorder).
type recorder interface {
	Event(obj runtime.Object, eventType, reason, messageFmt string, args ...any)
}

// clientAPI is api over mkube's client. Updates carry the object's
// resourceVersion: one written by someone else since is a Conflict, and
// the sync is retried on fresher objects.
type clientAPI struct{ c *client.Client }

func (a clientAPI) GetVolume(ctx context.Context, name string) (*corev1.PersistentVolume, error) {
	out := &corev1.PersistentVolume{}
	return out, a.c.Get(ctx, client.PersistentVolumes, "", name, out)
}

func (a clientAPI) CreateVolume(ctx context.Context, pv *corev1.PersistentVolume) (*corev1.PersistentVolume, error) {
	out := &corev1.PersistentVolume{}
	return out, a.c.Create(ctx, client.PersistentVolumes, "", pv, out)
}

func (a clientAPI) UpdateVolume(ctx context.Context, pv *corev1.PersistentVolume) (*corev1.PersistentVolume, error) {
	out := &corev1.PersistentVolume{}
	return out, a.c.Update(ctx, client.PersistentVolumes, "", pv.Name, pv, out)
}

func (a clientAPI) UpdateVolumeStatus(ctx context.Context, pv *corev1.PersistentVolume) (*corev1.PersistentVolume, error) {
	out := &corev1.PersistentVolume{}
	return out, a.c.UpdateStatus(ctx, client.PersistentVolumes, "", pv.Name, pv, out)
}

func (a clientAPI) DeleteVolume(ctx context.Context, name string) error {
	return a.c.Delete(ctx, client.PersistentVolumes, "", name, nil)
}

func (a clientAPI) GetClaim(ctx context.Context, namespace, name string) (*corev1.PersistentVolumeClaim, error) {
	out := &corev1.PersistentVolumeClaim{}
	return out, a.c.Get(ctx, client.PersistentVolumeClaims, namespace, name, out)
}

func (a clientAPI) UpdateClaim(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, error) {
	out := &corev1.PersistentVolumeClaim{}
	return out, a.c.Update(ctx, client.PersistentVolumeClaims, pvc.Namespace, pvc.Name, pvc, out)
}

func (a clientAPI) UpdateClaimStatus(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, error) {
	out := &corev1.PersistentVolumeClaim{}
	return out, a.c.UpdateStatus(ctx, client.PersistentVolumeClaims, pvc.Namespace, pvc.Name, pvc, out)
}
