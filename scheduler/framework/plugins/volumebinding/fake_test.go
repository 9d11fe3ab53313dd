package volumebinding

import (
	"context"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

// fakeStorage is the informers' storage, and the API server VolumeBinding
// writes to: an update is stored with the next resourceVersion, and
// onUpdate (if set) plays the PV controller's reaction.
type fakeStorage struct {
	mu       sync.Mutex
	rv       int
	claims   map[string]*corev1.PersistentVolumeClaim
	volumes  map[string]*corev1.PersistentVolume
	classes  map[string]*storagev1.StorageClass
	updates  []string // "pv NAME" or "pvc NAMESPACE/NAME", in order
	onUpdate func(s *fakeStorage, obj any)
}

func newStorage(objs ...any) *fakeStorage {
	s := &fakeStorage{claims: map[string]*corev1.PersistentVolumeClaim{}, volumes: map[string]*corev1.PersistentVolume{},
		classes: map[string]*storagev1.StorageClass{}}
	for _, o := range objs {
		s.put(o)
	}
	return s
}

// put stores o with a new resourceVersion; the lock is the caller's.
func (s *fakeStorage) put(o any) {
	s.rv++
	switch o := o.(type) {
	case *corev1.PersistentVolumeClaim:
		o.ResourceVersion = strconv.Itoa(s.rv)
		s.claims[claimKey(o)] = o
	case *corev1.PersistentVolume:
		o.ResourceVersion = strconv.Itoa(s.rv)
		s.volumes[o.Name] = o
	case *storagev1.StorageClass:
		s.classes[o.Name] = o
	}
}

func (s *fakeStorage) set(o any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(o)
}

func (s *fakeStorage) Claim(ns, name string) (*corev1.PersistentVolumeClaim, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.claims[ns+"/"+name]
	return c, ok
}

func (s *fakeStorage) Volume(name string) (*corev1.PersistentVolume, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pv, ok := s.volumes[name]
	return pv, ok
}

func (s *fakeStorage) Volumes() []*corev1.PersistentVolume {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*corev1.PersistentVolume
	for _, pv := range s.volumes {
		out = append(out, pv)
	}
	return out
}

func (s *fakeStorage) Class(name string) (*storagev1.StorageClass, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.classes[name]
	return c, ok
}

func (s *fakeStorage) UpdateVolume(_ context.Context, pv *corev1.PersistentVolume) (*corev1.PersistentVolume, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pv = pv.DeepCopy()
	s.put(pv)
	s.updates = append(s.updates, "pv "+pv.Name)
	if s.onUpdate != nil {
		s.onUpdate(s, pv)
	}
	return pv, nil
}

func (s *fakeStorage) UpdateClaim(_ context.Context, c *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c = c.DeepCopy()
	s.put(c)
	s.updates = append(s.updates, "pvc "+claimKey(c))
	if s.onUpdate != nil {
		s.onUpdate(s, c)
	}
	return c, nil
}

// bindInPlace is what the PV controller does once the scheduler chose:
// the claim gets the volume (a static one, or pvc-<uid> provisioned).
func bindInPlace(s *fakeStorage, c *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume) {
	c = c.DeepCopy()
	c.Spec.VolumeName = pv.Name
	metav1.SetMetaDataAnnotation(&c.ObjectMeta, storagehelpers.AnnBindCompleted, "yes")
	c.Status.Phase = corev1.ClaimBound
	s.put(c)
}

// Objects, in a line each.

func class(name, provisioner string, mode storagev1.VolumeBindingMode, zones ...string) *storagev1.StorageClass {
	c := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
	if len(zones) > 0 {
		c.AllowedTopologies = []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{
			{Key: corev1.LabelTopologyZone, Values: zones}}}}
	}
	return c
}

var (
	immediate = class("fast", "mkube.io/hostpath", storagev1.VolumeBindingImmediate)
	local     = class("local-wait", notSupportedProvisioner, storagev1.VolumeBindingWaitForFirstConsumer)
	waiting   = class("wait", "mkube.io/hostpath", storagev1.VolumeBindingWaitForFirstConsumer)
	zoneA     = class("zone-a", "mkube.io/hostpath", storagev1.VolumeBindingWaitForFirstConsumer, "a")
)

func claim(name, class, size string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(class), AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
}

// boundClaim is a claim the PV controller bound to volume.
func boundClaim(name, class, volume string) *corev1.PersistentVolumeClaim {
	c := claim(name, class, "1Gi")
	c.Spec.VolumeName = volume
	c.Annotations = map[string]string{storagehelpers.AnnBindCompleted: "yes"}
	c.Status.Phase = corev1.ClaimBound
	return c
}

func withAnnotation(c *corev1.PersistentVolumeClaim, k, v string) *corev1.PersistentVolumeClaim {
	metav1.SetMetaDataAnnotation(&c.ObjectMeta, k, v)
	return c
}

// volume is an Available hostPath volume of class, on the nodes named
// (every node if none).
func volume(name, class, size string, nodes ...string) *corev1.PersistentVolume {
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{StorageClassName: class, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data/" + name}}},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable},
	}
	if len(nodes) > 0 {
		pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: nodes}}}}}}
	}
	return pv
}

func claimVolume(name, claimName string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName}}}
}
