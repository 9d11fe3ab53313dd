package volumebinding

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/mkube/mkube/scheduler/framework"
)

// conflicts is a set of the reasons a node does not fit the pod's claims.
type conflicts uint8

const (
	nodeConflict conflicts = 1 << iota // a bound volume is not on the node
	bindConflict                       // an unbound claim finds no volume
	pvNotExist                         // a bound claim's volume is gone
)

// conflictStatus is the status of each set of reasons, built once and
// shared, as with 5000 nodes a cycle rejects thousands: nil for none,
// the reasons in Kubernetes' order otherwise.
var conflictStatus = func() (out [8]*framework.Status) {
	for set := conflicts(1); set < 8; set++ {
		var reasons []string
		for _, r := range []struct {
			bit    conflicts
			reason string
		}{{nodeConflict, ErrReasonNodeConflict}, {bindConflict, ErrReasonBindConflict}, {pvNotExist, ErrReasonPVNotExist}} {
			if set&r.bit != 0 {
				reasons = append(reasons, r.reason)
			}
		}
		out[set] = framework.NewStatus(framework.UnschedulableAndUnresolvable, reasons...).WithPlugin(Name)
	}
	return out
}()

// podVolumes is what the pod's claims would get on one node.
type podVolumes struct {
	conflicts conflicts
	static    []binding                       // delayed claims and the Available volume each would get
	provision []*corev1.PersistentVolumeClaim // delayed claims the class would provision for
}

// binding is a claim and its volume.
type binding struct {
	pv    *corev1.PersistentVolume
	claim *corev1.PersistentVolumeClaim
}

// notSupportedProvisioner is the provisioner of classes for static
// volumes only.
const notSupportedProvisioner = "kubernetes.io/no-provisioner"

// findPodVolumes is Kubernetes' FindPodVolumes for one node: each bound
// claim's volume must be there (its nodeAffinity fits the node's labels);
// each delayed claim either was given this node already (the selected-node
// annotation), or gets the smallest Available volume that fits it and the
// node (FindMatchingVolume, each volume to one claim), or else must be
// provisionable here.
func (pl *VolumeBinding) findPodVolumes(s *stateData, node *corev1.Node) (podVolumes, error) {
	var out podVolumes
	for _, claim := range s.bound {
		pv, ok := pl.volume(claim.Spec.VolumeName)
		if !ok {
			out.conflicts |= pvNotExist
			break
		}
		if storagehelpers.CheckNodeAffinity(pv, node.Labels) != nil {
			out.conflicts |= nodeConflict
			break
		}
	}
	var toMatch, toProvision []*corev1.PersistentVolumeClaim
	for _, claim := range s.delayed {
		selected, ok := claim.Annotations[storagehelpers.AnnSelectedNode]
		switch {
		case !ok:
			toMatch = append(toMatch, claim)
		case selected != node.Name:
			out.conflicts |= bindConflict // provisioning for another node has begun
			return out, nil
		default:
			toProvision = append(toProvision, claim)
		}
	}
	chosen := map[string]*corev1.PersistentVolume{}
	for _, claim := range toMatch {
		volumes := s.volumesByClass[storagehelpers.GetPersistentVolumeClaimClass(claim)]
		// vacEnabled: VolumeAttributesClass is GA since Kubernetes 1.34.
		pv, err := storagehelpers.FindMatchingVolume(claim, volumes, node, chosen, true, true)
		if err != nil {
			return out, err
		}
		if pv == nil {
			toProvision = append(toProvision, claim)
			continue
		}
		chosen[pv.Name] = pv
		out.static = append(out.static, binding{pv, claim})
	}
	for _, claim := range toProvision {
		ok, err := pl.canProvision(claim, node)
		if err != nil {
			return out, err
		}
		if !ok {
			out.conflicts |= bindConflict
			return out, nil
		}
	}
	out.provision = toProvision
	return out, nil
}

// canProvision: the claim's class has a provisioner, and its
// allowedTopologies (if any) admit the node. Errors are Kubernetes'.
func (pl *VolumeBinding) canProvision(claim *corev1.PersistentVolumeClaim, node *corev1.Node) (bool, error) {
	name := storagehelpers.GetPersistentVolumeClaimClass(claim)
	if name == "" {
		return false, fmt.Errorf("no class for claim %q", claimKey(claim))
	}
	class, ok := pl.storage.Class(name)
	if !ok {
		return false, fmt.Errorf("failed to find storage class %q", name)
	}
	if class.Provisioner == "" || class.Provisioner == notSupportedProvisioner {
		return false, nil
	}
	return matchTopology(class.AllowedTopologies, node.Labels), nil
}

// matchTopology is Kubernetes' MatchTopologySelectorTerms: no terms admit
// every node; else some term must match, and a term matches when each of
// its expressions has the node's value of its key among its values.
//
// Example: allowedTopologies [{topology.kubernetes.io/zone In [a, b]}]
// admits a node labelled zone=b, not one labelled zone=c or unlabelled.
func matchTopology(terms []corev1.TopologySelectorTerm, nodeLabels labels.Set) bool {
	if len(terms) == 0 {
		return true
	}
	for _, term := range terms {
		matches := true
		for _, e := range term.MatchLabelExpressions {
			v, ok := nodeLabels[e.Key]
			if !ok || !slices.Contains(e.Values, v) {
				matches = false
				break
			}
		}
		if matches {
			return true
		}
	}
	return false
}

// classLister is the StorageClass lister component-helpers'
// IsDelayBindingMode asks, over the scheduler's.
type classLister struct{ storage framework.StorageLister }

func (l classLister) List(labels.Selector) ([]*storagev1.StorageClass, error) {
	return nil, fmt.Errorf("listing classes is not needed")
}

func (l classLister) Get(name string) (*storagev1.StorageClass, error) {
	if c, ok := l.storage.Class(name); ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(storagev1.Resource("storageclass"), name)
}
