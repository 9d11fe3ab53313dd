// Package volumebinding is the filter, and the part of the binding cycle,
// that give a pod's PersistentVolumeClaims their volumes on the node the
// pod goes to: seed 003 §五's Binding, for the claims the scheduler binds.
//
// Predicate: CheckVolumeBinding (the name Kubernetes gave it after the
// seed's list of §二 was written). Kubernetes plugin: VolumeBinding.
//
// A volume can decide where its pod runs: a hostPath or local volume is
// on the nodes its nodeAffinity names. A claim of an Immediate class is
// bound by the PersistentVolume controller at once, wherever its volume
// is, and its pod must then go there. A claim of a WaitForFirstConsumer
// class waits for its first pod: the scheduler picks the volume with the
// node.
//
// Rule, for each claim of the pod, in PreFilter (once per cycle):
//
//	missing                                 UnschedulableAndUnresolvable `persistentvolumeclaim "data" not found`
//	being deleted, or Lost                  UnschedulableAndUnresolvable, saying so
//	unbound, of an Immediate class          UnschedulableAndUnresolvable "pod has unbound immediate PersistentVolumeClaims":
//	                                        the PV controller binds it, and its update retries the pod
//	bound (spec.volumeName, bind-completed) Filter checks its volume
//	unbound, WaitForFirstConsumer           Filter looks for a volume
//
// and in Filter, per node, UnschedulableAndUnresolvable with each reason
// that applies:
//
//	node(s) had volume node affinity conflict                                  a bound claim's volume is not on this node
//	node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)  a bound claim's volume is gone
//	node(s) didn't find available persistent volumes to bind                   an unbound claim has no Available volume that fits it and
//	                                                                           this node, and its class cannot provision one here
//
// Then, on the chosen node, the binding cycle (binding.go): Reserve
// assumes each chosen volume bound to its claim, and each claim to
// provision annotated volume.kubernetes.io/selected-node, so the next pods
// see them taken (assume.go); PreBind writes the same to the API server
// and waits until every claim is bound; only then is the pod bound.
//
// Worked example: class local-wait binds WaitForFirstConsumer with the
// provisioner kubernetes.io/no-provisioner; pv-node01 (1Gi, hostPath,
// nodeAffinity kubernetes.io/hostname In [node01]) is Available; the
// claim data (1Gi, class local-wait) is Pending. For a pod using data:
//
//	node01  pv-node01 fits data and node01                    feasible; Reserve takes pv-node01 for data
//	node02  pv-node01 is not on node02, no provisioner        "node(s) didn't find available persistent volumes to bind"
//
// The pod goes to node01: PreBind sets pv-node01's claimRef to
// default/data, the PV controller binds the two, and the pod is bound.
// With the provisioner mkube.io/hostpath and no static volume, both nodes
// fit, and the claim gets volume.kubernetes.io/selected-node: node01 (or
// node02), then a volume provisioned for it.
//
// Left out: storage capacity (CSIStorageCapacity; every class has room
// everywhere) and generic ephemeral volumes (no controller makes their
// claims in mkube).
//
// Where things live:
//
//	file               what it holds
//	volume_binding.go  the plugin, PreFilter (the pod's claims) and the events it registers for
//	find.go            Filter's question per node: a bound volume reachable, a matching volume to bind, or a class that can provision there
//	assume.go          the assumed bindings the next pods must see taken, until the API server has them
//	binding.go         the binding cycle: Reserve, Unreserve and PreBind
package volumebinding

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/scheduler/framework"
)

// Name is the plugin's name in kube-scheduler.
const Name = "VolumeBinding"

// Kubernetes' reasons.
const (
	ErrReasonBindConflict     = "node(s) didn't find available persistent volumes to bind"
	ErrReasonNodeConflict     = "node(s) had volume node affinity conflict"
	ErrReasonPVNotExist       = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
	ErrReasonUnboundImmediate = "pod has unbound immediate PersistentVolumeClaims"
)

// PreBind waits for the claims to be bound, as kube-scheduler's volume
// binder does: it looks every pollInterval, up to bindTimeout (its
// bindTimeoutSeconds default, 600). A provisioner that takes longer is
// broken; the pod is then retried, and its claims are handed back.
const (
	bindTimeout  = 10 * time.Minute
	pollInterval = time.Second
)

const stateKey framework.StateKey = "PreFilter" + Name

// VolumeBinding is the plugin.
type VolumeBinding struct {
	storage framework.StorageLister // the informers'
	writer  framework.StorageWriter // nil: PreBind cannot write
	clock   clock.WithTicker
	assumed *assumeCache
}

// New returns the plugin over h's storage listers.
func New(h framework.Handle) *VolumeBinding {
	pl := &VolumeBinding{storage: h.StorageOrNone(), writer: h.StorageWriter, clock: h.Clock, assumed: newAssumeCache()}
	if pl.clock == nil {
		pl.clock = clock.RealClock{}
	}
	return pl
}

func (*VolumeBinding) Name() string { return Name }

// stateData is what PreFilter found, for Filter and Reserve.
type stateData struct {
	bound   []*corev1.PersistentVolumeClaim // bound claims: their volumes must be on the node
	delayed []*corev1.PersistentVolumeClaim // unbound WaitForFirstConsumer claims, smallest request first
	// volumesByClass are the volumes of each delayed claim's class, as the
	// scheduler knows them (assumed bindings included).
	volumesByClass map[string][]*corev1.PersistentVolume
}

var skip = framework.NewStatus(framework.Skip, "the pod has no PersistentVolumeClaim")

// PreFilter sorts the pod's claims into bound and delayed ones, and
// rejects the pod outright for a claim that is missing, going away, or
// waiting for the PV controller.
func (pl *VolumeBinding) PreFilter(state *framework.CycleState, pod *framework.PodInfo, _ framework.NodeInfoLister) *framework.Status {
	s := &stateData{}
	immediate := 0
	for _, v := range pod.Pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		claim, st := pl.usableClaim(pod.Pod.Namespace, v.PersistentVolumeClaim.ClaimName)
		if st != nil {
			return st
		}
		if isFullyBound(claim) {
			s.bound = append(s.bound, claim)
			continue
		}
		delay, err := storagehelpers.IsDelayBindingMode(claim, classLister{pl.storage})
		switch {
		case err != nil:
			return framework.AsStatus(err)
		case delay && claim.Spec.VolumeName == "":
			s.delayed = append(s.delayed, claim)
		default: // a claim pre-bound to a volume is the PV controller's to bind, as an Immediate one
			immediate++
		}
	}
	switch {
	case len(s.bound)+len(s.delayed)+immediate == 0:
		return skip
	case immediate > 0:
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnboundImmediate)
	}
	// The smallest claims choose first, so they do not take the volumes
	// only the bigger ones fit (Kubernetes' byPVCSize).
	slices.SortStableFunc(s.delayed, func(a, b *corev1.PersistentVolumeClaim) int {
		qa, qb := a.Spec.Resources.Requests[corev1.ResourceStorage], b.Spec.Resources.Requests[corev1.ResourceStorage]
		return qa.Cmp(qb)
	})
	if len(s.delayed) > 0 {
		s.volumesByClass = map[string][]*corev1.PersistentVolume{}
		for _, pv := range pl.volumes() {
			class := storagehelpers.GetPersistentVolumeClass(pv)
			s.volumesByClass[class] = append(s.volumesByClass[class], pv)
		}
	}
	state.Write(stateKey, s)
	return nil
}

// usableClaim is the claim, or why no pod can use it now (Kubernetes'
// podHasPVCs).
func (pl *VolumeBinding) usableClaim(namespace, name string) (*corev1.PersistentVolumeClaim, *framework.Status) {
	claim, ok := pl.claim(namespace, name)
	switch {
	case !ok:
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, claimNotFound(name).Error())
	case claim.Status.Phase == corev1.ClaimLost:
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable,
			fmt.Sprintf("persistentvolumeclaim %q bound to non-existent persistentvolume %q", claim.Name, claim.Spec.VolumeName))
	case claim.DeletionTimestamp != nil:
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("persistentvolumeclaim %q is being deleted", claim.Name))
	}
	return claim, nil
}

// claimNotFound is the lister's NotFound for a claim, as kube-scheduler's
// plugins report it: `persistentvolumeclaim "data" not found`.
func claimNotFound(name string) error {
	return apierrors.NewNotFound(corev1.Resource("persistentvolumeclaim"), name)
}

// isFullyBound: the claim names its volume and the PV controller has
// finished the binding (Kubernetes' isPVCFullyBound).
func isFullyBound(claim *corev1.PersistentVolumeClaim) bool {
	return claim.Spec.VolumeName != "" && metav1.HasAnnotation(claim.ObjectMeta, storagehelpers.AnnBindCompleted)
}

// Filter checks the bound claims' volumes against the node and finds the
// delayed claims a volume on it.
func (pl *VolumeBinding) Filter(state *framework.CycleState, _ *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	s, err := framework.ReadAs[*stateData](state, stateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	found, err := pl.findPodVolumes(s, node.Node())
	if err != nil {
		return framework.AsStatus(err)
	}
	return conflictStatus[found.conflicts]
}

// EventsToRegister: what may give a rejected pod its volumes. A claim
// added or bound, a volume added or freed, a class added or changed, a
// node added or relabelled (a volume's nodeAffinity, a class's
// allowedTopologies).
func (*VolumeBinding) EventsToRegister() []framework.ClusterEvent {
	return []framework.ClusterEvent{
		{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add | framework.Update},
		{Resource: framework.PersistentVolume, ActionType: framework.Add | framework.Update},
		{Resource: framework.StorageClass, ActionType: framework.Add | framework.Update},
		{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel},
	}
}

// claimKey is a claim's "namespace/name".
func claimKey(c *corev1.PersistentVolumeClaim) string { return c.Namespace + "/" + c.Name }

// byName orders volumes by name, so that ties between equal volumes are
// decided the same way on every node.
func byName(a, b *corev1.PersistentVolume) int { return cmp.Compare(a.Name, b.Name) }
