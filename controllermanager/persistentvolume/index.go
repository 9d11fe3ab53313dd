package persistentvolume

import (
	"math/bits"
	"sort"

	corev1 "k8s.io/api/core/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

// findBestMatch picks the volume a claim binds to, as Kubernetes'
// persistentVolumeOrderedIndex.findBestMatchForClaim: the volumes are
// grouped by their set of access modes; of the groups offering every mode
// the claim asks for, those with the fewest modes are tried first (a
// ReadWriteOnce claim should not take a ReadWriteMany volume that a
// ReadWriteMany claim could use); within a group, FindMatchingVolume
// returns the volume pre-bound to the claim if there is one, else the
// smallest Available volume that is big enough and has the claim's
// volume mode, class and selector's labels.
//
// Worked example: a claim for 2Gi ReadWriteOnce, and volumes of 1Gi RWO,
// 5Gi RWO, 3Gi RWO+RWX and 10Gi RWO. The groups are {RWO: 1Gi, 5Gi, 10Gi}
// and {RWO,RWX: 3Gi}. RWO has fewer modes and goes first: 1Gi is too
// small, so the claim gets the 5Gi volume, not the smaller 3Gi one.
//
// delayBinding (the class binds WaitForFirstConsumer) leaves out all but
// pre-bound volumes: the scheduler chooses the others, with the pod's node.
func findBestMatch(claim *corev1.PersistentVolumeClaim, volumes []*corev1.PersistentVolume, delayBinding bool) (*corev1.PersistentVolume, error) {
	groups := map[modeSet][]*corev1.PersistentVolume{}
	for _, pv := range volumes {
		set := modeSetOf(pv.Spec.AccessModes)
		groups[set] = append(groups[set], pv)
	}
	wanted := modeSetOf(claim.Spec.AccessModes)
	var sets []modeSet
	for set := range groups {
		if set&wanted == wanted {
			sets = append(sets, set)
		}
	}
	sort.Slice(sets, func(i, j int) bool {
		if ni, nj := bits.OnesCount8(uint8(sets[i])), bits.OnesCount8(uint8(sets[j])); ni != nj {
			return ni < nj
		}
		return sets[i] < sets[j]
	})
	for _, set := range sets {
		// vacEnabled: VolumeAttributesClass is GA since Kubernetes 1.34.
		pv, err := storagehelpers.FindMatchingVolume(claim, groups[set], nil, nil, delayBinding, true)
		if err != nil || pv != nil {
			return pv, err
		}
	}
	return nil, nil
}

// modeSet is a set of access modes, one bit each: the index's key.
type modeSet uint8

var modeBits = map[corev1.PersistentVolumeAccessMode]modeSet{
	corev1.ReadWriteOnce: 1, corev1.ReadOnlyMany: 2, corev1.ReadWriteMany: 4, corev1.ReadWriteOncePod: 8}

func modeSetOf(modes []corev1.PersistentVolumeAccessMode) modeSet {
	var s modeSet
	for _, m := range modes {
		s |= modeBits[m]
	}
	return s
}
