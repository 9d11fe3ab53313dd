package persistentvolume

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/persistentvolume/volumeplugin"
)

// fakeAPI is an API server in memory, with the rules the binder relies
// on: resourceVersions that grow with each write, Conflict on a stale
// one, the status subresource writing only the status, and a new volume
// Pending whatever it says.
type fakeAPI struct {
	mu      sync.Mutex
	rv      int64
	writes  int
	volumes map[string]*corev1.PersistentVolume
	claims  map[string]*corev1.PersistentVolumeClaim // by namespace/name
}

func newFakeAPI() *fakeAPI {
	return &fakeAPI{volumes: map[string]*corev1.PersistentVolume{}, claims: map[string]*corev1.PersistentVolumeClaim{}}
}

var (
	volumesGR = corev1.Resource("persistentvolumes")
	claimsGR  = corev1.Resource("persistentvolumeclaims")
)

// stamp gives obj the next resourceVersion.
func (f *fakeAPI) stamp(obj metav1.Object) {
	f.rv++
	f.writes++
	obj.SetResourceVersion(strconv.FormatInt(f.rv, 10))
}

// add stores objects as they are (the test's starting state).
func (f *fakeAPI) add(objs ...runtime.Object) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, obj := range objs {
		m, _ := meta.Accessor(obj)
		f.rv++
		m.SetResourceVersion(strconv.FormatInt(f.rv, 10))
		if m.GetUID() == "" {
			m.SetUID(types.UID("uid-" + m.GetName()))
		}
		switch o := obj.(type) {
		case *corev1.PersistentVolume:
			f.volumes[o.Name] = o
		case *corev1.PersistentVolumeClaim:
			f.claims[client.KeyOf(o)] = o
		}
	}
}

func (f *fakeAPI) GetVolume(_ context.Context, name string) (*corev1.PersistentVolume, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if pv, ok := f.volumes[name]; ok {
		return pv.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(volumesGR, name)
}

func (f *fakeAPI) CreateVolume(_ context.Context, pv *corev1.PersistentVolume) (*corev1.PersistentVolume, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.volumes[pv.Name]; ok {
		return nil, apierrors.NewAlreadyExists(volumesGR, pv.Name)
	}
	pv = pv.DeepCopy()
	pv.UID = types.UID("uid-" + pv.Name)
	pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumePending}
	f.stamp(pv)
	f.volumes[pv.Name] = pv
	return pv.DeepCopy(), nil
}

func (f *fakeAPI) updateVolume(pv *corev1.PersistentVolume, status bool) (*corev1.PersistentVolume, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur, ok := f.volumes[pv.Name]
	if !ok {
		return nil, apierrors.NewNotFound(volumesGR, pv.Name)
	}
	if cur.ResourceVersion != pv.ResourceVersion {
		return nil, apierrors.NewConflict(volumesGR, pv.Name, errors.New("the object has been modified"))
	}
	next := cur.DeepCopy()
	if status {
		next.Status = pv.Status
	} else {
		next.Spec, next.Annotations, next.Finalizers = pv.Spec, pv.Annotations, pv.Finalizers
	}
	if next.DeletionTimestamp != nil && len(next.Finalizers) == 0 {
		delete(f.volumes, pv.Name)
		return next, nil
	}
	f.stamp(next)
	f.volumes[pv.Name] = next
	return next.DeepCopy(), nil
}

func (f *fakeAPI) UpdateVolume(_ context.Context, pv *corev1.PersistentVolume) (*corev1.PersistentVolume, error) {
	return f.updateVolume(pv, false)
}

func (f *fakeAPI) UpdateVolumeStatus(_ context.Context, pv *corev1.PersistentVolume) (*corev1.PersistentVolume, error) {
	return f.updateVolume(pv, true)
}

// DeleteVolume deletes, or with finalizers marks the volume deleted.
func (f *fakeAPI) DeleteVolume(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	pv, ok := f.volumes[name]
	if !ok {
		return apierrors.NewNotFound(volumesGR, name)
	}
	f.writes++
	if len(pv.Finalizers) == 0 {
		delete(f.volumes, name)
		return nil
	}
	now := metav1.Now()
	pv.DeletionTimestamp = &now
	f.stamp(pv)
	return nil
}

func (f *fakeAPI) GetClaim(_ context.Context, namespace, name string) (*corev1.PersistentVolumeClaim, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if pvc, ok := f.claims[namespace+"/"+name]; ok {
		return pvc.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(claimsGR, name)
}

func (f *fakeAPI) updateClaim(pvc *corev1.PersistentVolumeClaim, status bool) (*corev1.PersistentVolumeClaim, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := client.KeyOf(pvc)
	cur, ok := f.claims[key]
	if !ok {
		return nil, apierrors.NewNotFound(claimsGR, pvc.Name)
	}
	if cur.ResourceVersion != pvc.ResourceVersion {
		return nil, apierrors.NewConflict(claimsGR, pvc.Name, errors.New("the object has been modified"))
	}
	next := cur.DeepCopy()
	if status {
		next.Status = pvc.Status
	} else {
		next.Spec, next.Annotations, next.Finalizers = pvc.Spec, pvc.Annotations, pvc.Finalizers
	}
	f.stamp(next)
	f.claims[key] = next
	return next.DeepCopy(), nil
}

func (f *fakeAPI) UpdateClaim(_ context.Context, pvc *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, error) {
	return f.updateClaim(pvc, false)
}

func (f *fakeAPI) UpdateClaimStatus(_ context.Context, pvc *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, error) {
	return f.updateClaim(pvc, true)
}

// fakeLister is a cache the test fills.
type fakeLister map[string]runtime.Object

func (f fakeLister) Get(key string) (runtime.Object, bool) { obj, ok := f[key]; return obj, ok }

func (f fakeLister) List() []runtime.Object {
	var out []runtime.Object
	for _, obj := range f {
		out = append(out, obj)
	}
	sort.Slice(out, func(i, j int) bool { return client.KeyOf(out[i]) < client.KeyOf(out[j]) })
	return out
}

// ByIndex knows the one index the binder uses: pods by claim.
func (f fakeLister) ByIndex(index, value string) []runtime.Object {
	var out []runtime.Object
	for _, obj := range f.List() {
		for _, key := range PodClaimIndex(obj) {
			if index == IndexPodsByClaim && key == value {
				out = append(out, obj)
			}
		}
	}
	return out
}

// fakeRecorder keeps the events as "kind/name Type Reason message".
type fakeRecorder struct {
	mu     sync.Mutex
	events []string
}

func (r *fakeRecorder) Event(obj runtime.Object, eventType, reason, messageFmt string, args ...any) {
	m, _ := meta.Accessor(obj)
	kind := map[string]string{"PersistentVolume": "pv", "PersistentVolumeClaim": "pvc"}[obj.GetObjectKind().GroupVersionKind().Kind]
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("%s/%s %s %s %s", kind, m.GetName(), eventType, reason, fmt.Sprintf(messageFmt, args...)))
}

// world is a binder on a fake API server, caches and disks.
type world struct {
	api     *fakeAPI
	b       *binder
	rec     *fakeRecorder
	classes fakeLister
	pods    fakeLister
	nodes   fakeLister
	queued  []item
}

func newWorld(host volumeplugin.Host) *world {
	w := &world{api: newFakeAPI(), rec: &fakeRecorder{}, classes: fakeLister{}, pods: fakeLister{}, nodes: fakeLister{}}
	w.b = &binder{api: w.api, volumes: newStore[*corev1.PersistentVolume](), claims: newStore[*corev1.PersistentVolumeClaim](),
		classes: w.classes, pods: w.pods, nodes: w.nodes, host: host, rec: w.rec,
		clock: clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		log:   slog.New(slog.DiscardHandler), enqueue: func(it item) { w.queued = append(w.queued, it) }}
	return w
}

// add puts objects where they belong: claims and volumes in the API
// server, the rest in their caches.
func (w *world) add(objs ...runtime.Object) {
	for _, obj := range objs {
		switch o := obj.(type) {
		case *storagev1.StorageClass:
			w.classes[o.Name] = o
		case *corev1.Pod:
			w.pods[client.KeyOf(o)] = o
		case *corev1.Node:
			w.nodes[o.Name] = o
		default:
			w.api.add(obj)
		}
	}
}

// refresh makes the stores what the API server has, as the informers
// would.
func (w *world) refresh() {
	w.api.mu.Lock()
	defer w.api.mu.Unlock()
	for _, pv := range w.b.volumes.list() {
		if _, ok := w.api.volumes[pv.Name]; !ok {
			w.b.volumes.remove(pv.Name)
		}
	}
	for _, pvc := range w.b.claims.list() {
		if _, ok := w.api.claims[client.KeyOf(pvc)]; !ok {
			w.b.claims.remove(client.KeyOf(pvc))
		}
	}
	for _, pv := range w.api.volumes {
		w.b.volumes.update(pv.DeepCopy())
	}
	for _, pvc := range w.api.claims {
		w.b.claims.update(pvc.DeepCopy())
	}
}

// settle syncs every claim and volume, and whatever they queue, until a
// round writes nothing: the state the controller converges to.
func (w *world) settle() error {
	for range 20 {
		before := w.api.writes
		w.refresh()
		var items []item
		for _, pvc := range w.b.claims.list() {
			items = append(items, item{claimItem, client.KeyOf(pvc)})
		}
		for _, pv := range w.b.volumes.list() {
			items = append(items, item{volumeItem, pv.Name})
		}
		for len(items) > 0 {
			it := items[0]
			items = items[1:]
			if err := w.b.sync(context.Background(), it); err != nil && !apierrors.IsConflict(err) {
				return fmt.Errorf("sync %s: %w", it, err)
			}
			items, w.queued = append(items, w.queued...), nil
		}
		if w.api.writes == before {
			return nil
		}
	}
	return errors.New("the controller never settles")
}

// Builders of the tests' objects.

func volume(name, size string, modes ...corev1.PersistentVolumeAccessMode) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)}, Spec: corev1.PersistentVolumeSpec{
		Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
		AccessModes:                   modes,
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data/" + name}},
	}, Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable}}
}

func claim(name, size string, modes ...corev1.PersistentVolumeAccessMode) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: modes, StorageClassName: new(string),
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}
}

// boundTo makes pv look bound, by the controller, to the claim of that
// name and UID.
func boundTo(pv *corev1.PersistentVolume, claimName string) *corev1.PersistentVolume {
	pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "default", Name: claimName, UID: types.UID("uid-" + claimName)}
	pv.Annotations = map[string]string{"pv.kubernetes.io/bound-by-controller": "yes"}
	pv.Status.Phase = corev1.VolumeBound
	return pv
}

func class(name, provisioner string, mode storagev1.VolumeBindingMode) *storagev1.StorageClass {
	policy := corev1.PersistentVolumeReclaimDelete
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, ReclaimPolicy: &policy, VolumeBindingMode: &mode}
}

var (
	rwo = corev1.ReadWriteOnce
	rox = corev1.ReadOnlyMany
	rwx = corev1.ReadWriteMany
)

// describe renders the API server's claims and volumes, one line each,
// in the terms of `kubectl get`: phase, the other side, the annotations
// that record how the binding came about.
func (w *world) describe() []string {
	w.api.mu.Lock()
	defer w.api.mu.Unlock()
	var out []string
	for _, pv := range w.api.volumes {
		line := fmt.Sprintf("pv/%s %s", pv.Name, pv.Status.Phase)
		if ref := pv.Spec.ClaimRef; ref != nil {
			line += " claim=" + ref.Namespace + "/" + ref.Name
			if ref.UID == "" {
				line += "(no uid)"
			}
		}
		line += annotations(pv.Annotations)
		if pv.Status.Message != "" {
			line += " message=" + pv.Status.Message
		}
		out = append(out, line)
	}
	for _, pvc := range w.api.claims {
		line := fmt.Sprintf("pvc/%s %s", pvc.Name, pvc.Status.Phase)
		if pvc.Spec.VolumeName != "" {
			line += " volume=" + pvc.Spec.VolumeName
		}
		if q, ok := pvc.Status.Capacity[corev1.ResourceStorage]; ok {
			line += " capacity=" + q.String()
		}
		if pvc.Spec.StorageClassName != nil && *pvc.Spec.StorageClassName != "" {
			line += " class=" + *pvc.Spec.StorageClassName
		}
		out = append(out, line+annotations(pvc.Annotations))
	}
	sort.Strings(out)
	return out
}

// annotations shows the binding annotations by their short names.
func annotations(a map[string]string) string {
	var out []string
	for k, v := range a {
		short, _ := strings.CutPrefix(k, "pv.kubernetes.io/")
		switch k {
		case "volume.kubernetes.io/storage-provisioner":
			out = append(out, "provisioner="+v)
		case "pv.kubernetes.io/provisioned-by":
			out = append(out, short+"="+v)
		case "pv.kubernetes.io/bind-completed", "pv.kubernetes.io/bound-by-controller":
			out = append(out, short)
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return ""
	}
	return " [" + strings.Join(out, " ") + "]"
}
