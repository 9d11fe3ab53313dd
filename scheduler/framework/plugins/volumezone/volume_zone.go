// Package volumezone is the filter that keeps a pod in the zone (and
// region) of the volumes its claims are bound to: a cloud disk can only
// be attached to a machine of its own zone.
//
// Seed predicate: NoVolumeZoneConflict (seed 000 §二 lists the older
// predicates; this one came with zonal disks). Kubernetes plugin:
// VolumeZone.
//
// Rule: a volume says where it is with the labels
//
//	topology.kubernetes.io/zone, topology.kubernetes.io/region
//	failure-domain.beta.kubernetes.io/zone, failure-domain.beta.kubernetes.io/region   (deprecated, still honoured)
//
// whose value may list several zones joined by "__" (a regional disk:
// "a__b"). For each such label of each bound volume of the pod, the node
// must carry the same key (or, for a beta key, its GA twin) with one of
// the listed values. A node with none of the four labels fits anything:
// a cluster without zones. Claims not bound yet are VolumeBinding's
// (WaitForFirstConsumer) or make the pod wait; a missing claim, class or
// volume rejects it in PreFilter with the lister's NotFound.
//
// Worked example: pv-a is labelled topology.kubernetes.io/zone=a and
// bound to the pod's claim.
//
//	node01  zone=a             fits
//	node02  zone=b             rejected: "node(s) had no available volume zone"
//	node03  no zone label      fits (the node says nothing about zones)
//
// A pod without claims, or whose volumes carry no zone, skips the filter
// in PreFilter.
//
// It all lives in volume_zone.go.
package volumezone

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/mkube/mkube/scheduler/framework"
)

// Name is the plugin's name in kube-scheduler.
const Name = "VolumeZone"

// ErrReasonConflict is Kubernetes' reason string.
const ErrReasonConflict = "node(s) had no available volume zone"

// topologyLabels are the labels that place a volume, Kubernetes' order.
var topologyLabels = []string{corev1.LabelFailureDomainBetaZone, corev1.LabelFailureDomainBetaRegion, corev1.LabelTopologyZone, corev1.LabelTopologyRegion}

// gaLabel is the GA twin of a deprecated beta label.
var gaLabel = map[string]string{
	corev1.LabelFailureDomainBetaZone:   corev1.LabelTopologyZone,
	corev1.LabelFailureDomainBetaRegion: corev1.LabelTopologyRegion,
}

// multiZoneDelimiter joins the zones of a regional volume (Kubernetes'
// LabelMultiZoneDelimiter).
const multiZoneDelimiter = "__"

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// VolumeZone is the filter.
type VolumeZone struct {
	storage framework.StorageLister
}

// New returns the plugin over h's storage listers.
func New(h framework.Handle) *VolumeZone { return &VolumeZone{storage: h.StorageOrNone()} }

func (*VolumeZone) Name() string { return Name }

// topology is one label of a volume: the node's value of key must be
// one of values.
type topology struct {
	key    string
	values sets.Set[string]
}

type preFilterState struct{ topologies []topology }

// errStatus is the one rejection, shared. UnschedulableAndUnresolvable:
// evicting pods does not move a node to another zone.
var errStatus = framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonConflict).WithPlugin(Name)

var (
	skipNoClaims = framework.NewStatus(framework.Skip, "the pod has no PersistentVolumeClaim")
	skipNoZones  = framework.NewStatus(framework.Skip, "the pod's volumes are in no zone")
)

// PreFilter collects the zone and region labels of the pod's bound
// volumes (Kubernetes' getPVbyPod).
func (pl *VolumeZone) PreFilter(state *framework.CycleState, pod *framework.PodInfo, _ framework.NodeInfoLister) *framework.Status {
	s := &preFilterState{}
	hasClaims := false
	for _, v := range pod.Pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		hasClaims = true
		pv, st := pl.volumeOf(pod.Pod.Namespace, v.PersistentVolumeClaim.ClaimName)
		if st != nil {
			return st
		}
		if pv != nil {
			s.topologies = append(s.topologies, topologies(pv)...)
		}
	}
	switch {
	case !hasClaims:
		return skipNoClaims
	case len(s.topologies) == 0:
		return skipNoZones
	}
	state.Write(preFilterStateKey, s)
	return nil
}

// volumeOf is the volume a claim is bound to; nil for a claim of a
// WaitForFirstConsumer class that is not bound yet.
func (pl *VolumeZone) volumeOf(namespace, name string) (*corev1.PersistentVolume, *framework.Status) {
	if name == "" {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no name")
	}
	claim, ok := pl.storage.Claim(namespace, name)
	if !ok {
		return nil, notFound("persistentvolumeclaim", name)
	}
	if claim.Spec.VolumeName == "" {
		className := storagehelpers.GetPersistentVolumeClaimClass(claim)
		if className == "" {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no pv name and storageClass name")
		}
		class, ok := pl.storage.Class(className)
		switch {
		case !ok:
			return nil, notFound("storageclass", className)
		case class.VolumeBindingMode == nil:
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("VolumeBindingMode not set for StorageClass %q", className))
		case *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer:
			return nil, nil // VolumeBinding's to place
		}
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, "PersistentVolume had no name")
	}
	pv, ok := pl.storage.Volume(claim.Spec.VolumeName)
	if !ok {
		return nil, notFound("persistentvolume", claim.Spec.VolumeName)
	}
	return pv, nil
}

// notFound is the lister's NotFound, `persistentvolume "pv-a" not found`.
func notFound(resource, name string) *framework.Status {
	group := corev1.Resource(resource)
	if resource == "storageclass" {
		group = storagev1.Resource(resource)
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, apierrors.NewNotFound(group, name).Error())
}

// topologies are pv's zone and region labels; a value with an empty zone
// in its list is ignored, as Kubernetes ignores what it cannot parse.
func topologies(pv *corev1.PersistentVolume) []topology {
	var out []topology
	for _, key := range topologyLabels {
		value, ok := pv.Labels[key]
		if !ok {
			continue
		}
		zones := strings.Split(value, multiZoneDelimiter)
		values := sets.New[string]()
		for _, z := range zones {
			if z = strings.TrimSpace(z); z == "" {
				values = nil
				break
			}
			values.Insert(z)
		}
		if values != nil {
			out = append(out, topology{key, values})
		}
	}
	return out
}

// Filter checks the node's zone and region against the volumes'.
func (*VolumeZone) Filter(state *framework.CycleState, _ *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	s, err := framework.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	labels := node.Node().Labels
	constrained := false
	for _, key := range topologyLabels {
		if _, ok := labels[key]; ok {
			constrained = true
			break
		}
	}
	if !constrained {
		return nil // a node in no zone: a single-zone cluster
	}
	for _, t := range s.topologies {
		v, ok := labels[t.key]
		if !ok {
			v, ok = labels[gaLabel[t.key]]
		}
		if !ok || !t.values.Has(v) {
			return errStatus
		}
	}
	return nil
}

// EventsToRegister: a node added or relabelled, a claim or volume added
// or changed (bound, relabelled), a class added.
func (*VolumeZone) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{
		{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel},
		{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add | framework.Update},
		{Resource: framework.PersistentVolume, ActionType: framework.Add | framework.Update},
		{Resource: framework.StorageClass, ActionType: framework.Add},
	}
}
