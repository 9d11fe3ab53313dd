package volumerestrictions

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/mkube/mkube/scheduler/framework"
)

// The ReadWriteOncePod rule: one pod per claim in the whole cluster.
//
// Worked example: claim db has accessModes [ReadWriteOncePod]; pod db-0
// uses it and runs on node01. Pod db-1, naming db too, gets on every node
// "node has pod using PersistentVolumeClaim with the same name and
// ReadWriteOncePod access mode", node01 and node02 alike: the count is
// the cluster's, not the node's. Should db-1 have a higher priority,
// preemption takes db-0 off node01 (RemovePod brings the count to 0) and
// db-1 fits there once db-0 is gone.
//
// The count looks at every pod the snapshot has, once per cycle, and only
// for a pod with a ReadWriteOncePod claim: such pods are few, and a
// 5000-node cycle for any other pod costs nothing more.

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// errReadWriteOncePod is the rejection, shared. Unschedulable: evicting
// the pod that holds the claim would let this one have it.
var errReadWriteOncePod = framework.NewStatus(framework.Unschedulable, ErrReasonReadWriteOncePodConflict).WithPlugin(Name)

// preFilterState is the pod's ReadWriteOncePod claims (in its namespace)
// and how many uses of them other pods make.
type preFilterState struct {
	namespace string
	claims    sets.Set[string]
	conflicts int
}

// Clone: preemption changes conflicts on its copy (AddPod, RemovePod).
func (s *preFilterState) Clone() framework.StateData {
	c := *s
	return &c
}

// readWriteOncePod finds the pod's ReadWriteOncePod claims and counts
// their users among the pods of nodes.
func (pl *VolumeRestrictions) readWriteOncePod(pod *framework.PodInfo, nodes framework.NodeInfoLister) (*preFilterState, *framework.Status) {
	s := &preFilterState{namespace: pod.Pod.Namespace}
	for _, v := range pod.Pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		name := v.PersistentVolumeClaim.ClaimName
		claim, ok := pl.storage.Claim(s.namespace, name)
		if !ok {
			notFound := apierrors.NewNotFound(corev1.Resource("persistentvolumeclaim"), name)
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, notFound.Error())
		}
		if slices.Contains(claim.Spec.AccessModes, corev1.ReadWriteOncePod) {
			if s.claims == nil {
				s.claims = sets.New[string]()
			}
			s.claims.Insert(name)
		}
	}
	if len(s.claims) == 0 || nodes == nil {
		return s, nil
	}
	for _, n := range nodes.List() {
		for _, p := range n.Pods {
			s.conflicts += s.uses(p)
		}
	}
	return s, nil
}

// uses is how many of s's claims p names.
func (s *preFilterState) uses(p *framework.PodInfo) int {
	if p.Pod.Namespace != s.namespace {
		return 0
	}
	n := 0
	for _, v := range p.Pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && s.claims.Has(v.PersistentVolumeClaim.ClaimName) {
			n++
		}
	}
	return n
}

// AddPod counts a pod that preemption or a nomination puts on a node.
func (*VolumeRestrictions) AddPod(state *framework.CycleState, _, podToAdd *framework.PodInfo, _ *framework.NodeInfo) *framework.Status {
	s, err := framework.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.conflicts += s.uses(podToAdd)
	return nil
}

// RemovePod un-counts a pod that preemption takes off a node.
func (*VolumeRestrictions) RemovePod(state *framework.CycleState, _, podToRemove *framework.PodInfo, _ *framework.NodeInfo) *framework.Status {
	s, err := framework.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	s.conflicts -= s.uses(podToRemove)
	return nil
}
