// Package preemption is what the scheduler does for a pod that fits no
// node: Kubernetes' DefaultPreemption, the one plugin of the PostFilter
// extension point, which runs only after Filter found no node. Seed 003,
// "Pod 优先级和抢占式调度": a pod that cannot be scheduled makes room by
// evicting pods of lower priority ("调度器会尝试抢占（驱逐）较低优先级的 Pod
// 对象，以便可以调度当前 Pod").
//
// The algorithm in one sentence: on every node that only failed for
// reasons removing pods can fix, take off every pod of lower priority,
// check that the pod fits, then put pods back, most important first, as
// long as it still fits; the pods left off are that node's victims; of
// the nodes that have victims, pick the one where preemption hurts least.
//
// Step by step (Evaluator.Preempt):
//
//  1. eligible: not with preemptionPolicy Never, and not while victims of
//     an earlier preemption are still terminating on the node the pod is
//     nominated to (it waits for them rather than preempting more);
//  2. potential nodes: those rejected by a filter with Unschedulable
//     (Insufficient cpu, Too many pods, a host port taken, anti-affinity),
//     never those rejected with UnschedulableAndUnresolvable (a taint, node
//     affinity, a cordon, another nodeName): no eviction fixes those;
//  3. victims per node (SelectVictimsOnNode, select_victims.go), on copies
//     of the node and of the cycle state, until enough candidate nodes are
//     found (numCandidates);
//  4. the best candidate (pickOneNode, pick_node.go): fewest
//     PodDisruptionBudget violations, then the lowest highest victim
//     priority, the smallest sum of priorities, the fewest victims, the
//     latest start among the highest-priority victims, the first.
//
// The scheduler then acts on the choice (scheduler/preemption.go): it
// nominates the pod to the node (status.nominatedNodeName), deletes the
// victims gracefully with a Preempted event each, and puts the pod back
// in the queue. The victims' deletion, once the kubelet has stopped them,
// frees the room and retries the pod; meanwhile the nomination keeps pods
// of lower or equal priority off that room
// (framework.RunFilterPluginsWithNominatedPods).
//
// Guarantees, as in Kubernetes: a victim always has a strictly lower
// priority than the preemptor; victims come from one node only (no
// cross-node preemption: a pod blocked by anti-affinity to a pod on
// another node of its zone is not helped); PodDisruptionBudgets are
// honoured when some choice honours them, but they do not forbid
// preemption; the preemptor is not bound on the spot, and another pod may
// still take the room (a higher-priority one may).
//
// Worked example: a pod P of priority 100 requests 1 cpu; every node is
// full.
//
//	node01 (2 cpu): a prio 10, 1 cpu; b prio 0, 500m, started 09:00; c prio 0, 500m, started 10:00
//	node02 (2 cpu): d prio 5, 1500m; e prio 200, 500m
//
//	node01: take a, b, c off → 2 cpu free, P fits. Put back a (most important):
//	        1 cpu free, P fits, a stays. Put back b (equal priority to c, started
//	        earlier): 500m free, P does not fit, b is a victim; c likewise.
//	        Victims [b, c], highest priority 0.
//	node02: take d off (e has the higher priority, it stays) → 1 cpu free,
//	        P fits. Put back d: no. Victims [d], highest priority 5.
//	pick:   no PodDisruptionBudget: 0 violations each; the highest victim
//	        priority decides, 0 < 5 → node01, victims b and c.
//
// Where things live:
//
//	file               what it holds
//	preemption.go      the Evaluator and Preempt: eligibility, potential nodes, the dry runs, the Result
//	select_victims.go  SelectVictimsOnNode: take off, put back, the victims of one node
//	pick_node.go       pickOneNode: the best candidate by the rules of step 4
//	pdb.go             PDBLister and which victims a PodDisruptionBudget would be violated by
package preemption

import (
	"fmt"
	"math/rand/v2"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/mkube/mkube/internal/podcondition"
	"github.com/mkube/mkube/scheduler/framework"
)

// Name is the plugin's name in kube-scheduler; it names the statuses
// preemption gives nodes.
const Name = "DefaultPreemption"

// How many candidate nodes a dry run looks for before it stops: 10% of
// the potential nodes, but at least 100 (DefaultPreemptionArgs'
// minCandidateNodesPercentage and minCandidateNodesAbsolute). Every node
// tried costs a clone and a run of the filters per victim; past a hundred
// good candidates, the best of them is close enough to the best of all.
const (
	minCandidateNodesPercentage = 10
	minCandidateNodesAbsolute   = 100
)

// Reasons, worded as in Kubernetes.
const (
	ErrReasonNotHelpful           = "Preemption is not helpful for scheduling"
	ErrReasonNoVictims            = "No preemption victims found for incoming pod"
	ErrReasonPolicyNever          = "not eligible due to preemptionPolicy=Never."
	ErrReasonTerminatingOnNomNode = "not eligible due to a terminating pod on the nominated node."
)

// Evaluator runs preemption for the pods of one scheduler.
type Evaluator struct {
	fwk  *framework.Framework
	pdbs PDBLister
	rand *rand.Rand // where a dry run starts among the potential nodes
}

// New returns an evaluator that runs fwk's filters. pdbs may be nil (no
// budgets); rnd must not be used by another goroutine.
func New(fwk *framework.Framework, pdbs PDBLister, rnd *rand.Rand) *Evaluator {
	return &Evaluator{fwk: fwk, pdbs: pdbs, rand: rnd}
}

// Result is what a preemption decided.
type Result struct {
	// Nominating says what to do with the pod's status.nominatedNodeName.
	Nominating framework.NominatingInfo
	// Candidate is the chosen node and its victims; nil unless the status
	// is Success.
	Candidate *framework.Candidate
}

// PostFilter is Preempt as the PostFilter extension point returns it:
// any message is prefixed "preemption: ", for the FitError's message
// (framework.Diagnosis.PostFilterMsg).
func (ev *Evaluator) PostFilter(state *framework.CycleState, pod *framework.PodInfo, nominatedNode string, d framework.Diagnosis,
	nodes framework.NodeInfoLister, nominated framework.NominatedPods) (Result, *framework.Status) {
	r, st := ev.Preempt(state, pod, nominatedNode, d, nodes, nominated)
	if msg := st.Message(); msg != "" {
		return r, framework.NewStatus(st.Code(), "preemption: "+msg).WithPlugin(Name)
	}
	return r, st
}

// Preempt looks for a node where evicting pods of lower priority lets pod
// fit. state is the cycle's state after PreFilter; nominatedNode is the
// node the pod is already nominated to ("" if none); d says why each
// node was rejected; nominated are the pods nominated to nodes that count
// against pod. The outcomes, as in Kubernetes:
//
//	Success, Candidate set, Nominating = Nominate(node)   victims found
//	Unschedulable, Nominating = ClearNomination           preemption cannot help; the message says why per node
//	Unschedulable, Nominating = ModeNoop                   not eligible (Never, or waiting for its victims)
//	Error, ModeNoop                                        a filter failed
func (ev *Evaluator) Preempt(state *framework.CycleState, pod *framework.PodInfo, nominatedNode string, d framework.Diagnosis,
	nodes framework.NodeInfoLister, nominated framework.NominatedPods) (Result, *framework.Status) {
	// 1) Eligible?
	if ok, reason := podEligibleToPreemptOthers(pod.Pod, nominatedNode, d, nodes); !ok {
		return Result{}, framework.NewStatus(framework.Unschedulable, reason)
	}
	// 2) and 3) Candidates.
	candidates, statuses, err := ev.findCandidates(state, pod, d, nodes, nominated)
	if err != nil && len(candidates) == 0 {
		return Result{}, framework.AsStatus(err)
	}
	if len(candidates) == 0 {
		// The FitError of preemption: why each node did not help.
		fitErr := &framework.FitError{Pod: pod.Pod, NumAllNodes: nodes.NumNodes(), Diagnosis: framework.Diagnosis{NodeToStatus: statuses}}
		return Result{Nominating: framework.ClearNomination}, framework.NewStatus(framework.Unschedulable, fitErr.Error())
	}
	// 4) The best one.
	best := pickOneNode(candidates)
	return Result{Nominating: framework.Nominate(best.Node), Candidate: best}, nil
}

// podEligibleToPreemptOthers is Kubernetes' rule of the same name. A pod
// already nominated to a node where a pod of lower priority is still
// terminating because of a preemption (deletionTimestamp set, condition
// DisruptionTarget=True with reason PreemptionByScheduler) waits for it:
// preempting again would evict more pods for the same room. If the filters
// now reject that node for good (UnschedulableAndUnresolvable: it was
// tainted, say), the pod may preempt elsewhere.
func podEligibleToPreemptOthers(pod *corev1.Pod, nominatedNode string, d framework.Diagnosis, nodes framework.NodeInfoLister) (bool, string) {
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == corev1.PreemptNever {
		return false, ErrReasonPolicyNever
	}
	if nominatedNode == "" {
		return true, ""
	}
	for _, ns := range d.NodeToStatus {
		if ns.Node == nominatedNode && ns.Status.Code() == framework.UnschedulableAndUnresolvable {
			return true, ""
		}
	}
	if n, ok := nodes.Get(nominatedNode); ok {
		prio := framework.PodPriority(pod)
		for _, p := range n.Pods {
			if p.Priority < prio && terminatingByPreemption(p.Pod) {
				return false, ErrReasonTerminatingOnNomNode
			}
		}
	}
	return true, ""
}

// terminatingByPreemption: being deleted, and marked by the scheduler as
// preempted (the condition prepareCandidate sets before deleting).
func terminatingByPreemption(p *corev1.Pod) bool {
	if p.DeletionTimestamp == nil {
		return false
	}
	c := podcondition.Get(p, corev1.DisruptionTarget)
	return c != nil && c.Status == corev1.ConditionTrue && c.Reason == corev1.PodReasonPreemptionByScheduler
}

// findCandidates dry-runs preemption on the potential nodes, starting at a
// random one (so that equal nodes share the preemptions), and returns the
// candidates, those without PodDisruptionBudget violations first, and the
// status of every node that is not one: "Preemption is not helpful for
// scheduling" for the nodes no eviction can fix, else why the dry run
// failed there.
func (ev *Evaluator) findCandidates(state *framework.CycleState, pod *framework.PodInfo, d framework.Diagnosis,
	nodes framework.NodeInfoLister, nominated framework.NominatedPods) ([]*framework.Candidate, []framework.NodeStatus, error) {
	var potential []*framework.NodeInfo
	statuses := make([]framework.NodeStatus, 0, nodes.NumNodes())
	for _, ns := range d.NodeToStatus {
		n, ok := nodes.Get(ns.Node)
		switch {
		case !ok:
		case ns.Status.Code() == framework.Unschedulable:
			potential = append(potential, n)
		default:
			statuses = append(statuses, framework.NodeStatus{Node: ns.Node, Status: notHelpful})
		}
	}
	if len(d.NodeToStatus) < nodes.NumNodes() {
		// Nodes the filters did not reject (none, when the pod fits
		// nowhere): nothing to fix there either.
		rejected := make(map[string]bool, len(d.NodeToStatus))
		for _, ns := range d.NodeToStatus {
			rejected[ns.Node] = true
		}
		for _, n := range nodes.List() {
			if !rejected[n.Node().Name] {
				statuses = append(statuses, framework.NodeStatus{Node: n.Node().Name, Status: notHelpful})
			}
		}
	}
	if len(potential) == 0 {
		return nil, statuses, nil
	}
	var pdbs []*policyv1.PodDisruptionBudget
	if ev.pdbs != nil {
		pdbs = ev.pdbs.List()
	}
	offset, want := ev.offsetAndNumCandidates(len(potential))
	var nonViolating, violating []*framework.Candidate
	var errs []error
	prio := pod.Priority
	for i := range potential {
		node := potential[(offset+i)%len(potential)]
		name := node.Node().Name
		if !hasLowerPriorityPod(node, prio) {
			// SelectVictimsOnNode would say so too, after cloning the node
			// and the state (as Kubernetes does). Looking first spares the
			// clones on every node of a cluster where all pods have the
			// same priority (0 without PriorityClasses).
			statuses = append(statuses, framework.NodeStatus{Node: name, Status: noVictims})
			continue
		}
		victims, numViolations, st := ev.SelectVictimsOnNode(state.Clone(), pod, node.Clone(), nominated[name], pdbs)
		if st.IsSuccess() && len(victims) == 0 {
			st = framework.AsStatus(fmt.Errorf("expected at least one victim pod on node %q", name))
		}
		if !st.IsSuccess() {
			if st.Code() == framework.Error {
				errs = append(errs, st.AsError())
			}
			statuses = append(statuses, framework.NodeStatus{Node: name, Status: st})
			continue
		}
		c := &framework.Candidate{Node: name, Victims: victims, NumPDBViolations: numViolations}
		if numViolations == 0 {
			nonViolating = append(nonViolating, c)
		} else {
			violating = append(violating, c)
		}
		if len(nonViolating) > 0 && len(nonViolating)+len(violating) >= want {
			break
		}
	}
	var err error
	if len(errs) > 0 {
		err = fmt.Errorf("preemption dry run: %w", errs[0])
	}
	return append(nonViolating, violating...), statuses, err
}

func hasLowerPriorityPod(node *framework.NodeInfo, prio int32) bool {
	for _, p := range node.Pods {
		if p.Priority < prio {
			return true
		}
	}
	return false
}

var notHelpful = framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNotHelpful).WithPlugin(Name)

// offsetAndNumCandidates: where the dry run starts, and how many
// candidates it looks for: max(10% of the potential nodes, 100), at most
// all of them. Example: 5000 potential nodes → 500; 300 → 100; 40 → 40.
func (ev *Evaluator) offsetAndNumCandidates(potential int) (offset, num int) {
	num = max(potential*minCandidateNodesPercentage/100, minCandidateNodesAbsolute)
	num = min(num, potential)
	if ev.rand != nil {
		offset = ev.rand.IntN(potential)
	}
	return offset, num
}
