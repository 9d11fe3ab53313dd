package statefulset

import (
	"fmt"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// One sync decides its writes before making any (plan), from the cache as
// it is, then makes them in order (execute). The decisions are Kubernetes'
// defaultStatefulSetControl.updateStatefulSet, in four phases:
//
//  1. replicas — every ordinal in [start, start+replicas), lowest first:
//     create a missing pod (its claims first), delete a failed one (the
//     next sync recreates it), create a pending pod's missing claims, fix
//     a running pod's identity, storage or claim references;
//  2. condemned claims — the claims of pods above the range get the
//     references the retention policy wants before their pods go;
//  3. condemned — delete the pods above the range, highest first;
//  4. rolling update — delete pods not at the update revision, highest
//     first, down to the partition, at most maxUnavailable at a time
//     (OnDelete: never; the user deletes them).
//
// OrderedReady (the default) is monotonic: the plan stops at the first
// pod it must wait for — a pod just created, a pod not yet Running and
// Ready (and available, with minReadySeconds), a pod terminating — so pod
// N+1 is created only once pods 0..N are ready, and a scale-down deletes
// one pod at a time, only while the pods below it are healthy. Parallel
// lifts the order and the waiting: every phase's writes go at once.
// A deleted pod comes back, made from the right revision, in phase 1 of
// a later sync: that is how both a scale-up after a failure and each step
// of a rolling update end.

// opKind is one kind of write for one pod.
type opKind int

const (
	opCreate       opKind = iota // create the pod's claims (those missing), then the pod
	opDelete                     // delete the pod
	opEnsureClaims               // create a pending pod's missing claims, fix their references
	opUpdate                     // fix the pod's identity and storage, and its claims' references
	opFixClaimRefs               // set a condemned pod's claims' references
)

// op is one write: its kind, the pod (for opCreate the pod to create; else
// the cached pod, read only), and why, for the log.
type op struct {
	kind opKind
	pod  *corev1.Pod
	why  string
}

// phase is a list of items, each the ops of one pod, done in order.
// Ordered phases run item after item and stop at the first error;
// the others (Parallel) run items in slow-start batches.
type phase struct {
	name    string
	items   [][]op
	ordered bool
}

// plan is what one sync will do, and what it counts its status from.
type plan struct {
	replicas  []*corev1.Pod // by ordinal-start; a pod to be created has no phase
	condemned []*corev1.Pod // above the range, highest ordinal first
	phases    []phase
	waiting   string // why an OrderedReady plan stops early, for the log ("" = it did not)
}

// planInput is what planning reads: the set, the set with each revision's
// template applied, the revisions' names, the pods the set owns, and the
// claims cache.
type planInput struct {
	set, currentSet, updateSet *appsv1.StatefulSet
	currentRevision            string
	updateRevision             string
	pods                       []*corev1.Pod
	claim                      func(name string) *corev1.PersistentVolumeClaim // nil if not cached
	now                        time.Time
}

// planSync is the plan of one sync (see the top of this file).
func planSync(in planInput) *plan {
	set := in.set
	start, n := startOrdinal(set), replicasOf(set)
	p := &plan{replicas: make([]*corev1.Pod, n)}
	for _, pod := range in.pods {
		switch ord := ordinalOf(pod); {
		case inOrdinalRange(pod, set):
			p.replicas[ord-start] = pod
		case ord >= 0:
			p.condemned = append(p.condemned, pod)
		}
	}
	for i := range p.replicas {
		if p.replicas[i] == nil {
			p.replicas[i] = newVersionedPod(in, start+i)
		}
	}
	sort.Slice(p.condemned, func(i, j int) bool { return ordinalOf(p.condemned[i]) > ordinalOf(p.condemned[j]) })
	if set.DeletionTimestamp != nil {
		return p // being deleted: only the status is kept up to date
	}

	monotonic := set.Spec.PodManagementPolicy != appsv1.ParallelPodManagement
	firstUnhealthy := p.firstUnhealthy(set.Spec.MinReadySeconds, in.now)

	replicas := phase{name: "replicas", ordered: monotonic}
	for _, pod := range p.replicas {
		ops, wait := planReplica(in, pod, monotonic)
		if len(ops) > 0 {
			replicas.items = append(replicas.items, ops)
		}
		if wait != "" && monotonic {
			p.phases, p.waiting = append(p.phases, replicas), wait
			return p
		}
	}
	p.phases = append(p.phases, replicas)

	claims := phase{name: "condemned claims", ordered: monotonic}
	for _, pod := range p.condemned {
		if !claimsMatchRetention(in, pod) {
			claims.items = append(claims.items, []op{{opFixClaimRefs, pod, "the retention policy"}})
		}
	}
	p.phases = append(p.phases, claims)

	condemned := phase{name: "scale down", ordered: monotonic}
	for _, pod := range p.condemned {
		if wait := planCondemned(&condemned, pod, firstUnhealthy, set.Spec.MinReadySeconds, in.now, monotonic); wait != "" {
			p.phases, p.waiting = append(p.phases, condemned), wait
			return p
		}
	}
	p.phases = append(p.phases, condemned)

	if set.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType {
		p.phases = append(p.phases, planRollingUpdate(in, p.replicas))
	}
	return p
}

// newVersionedPod is the pod to create for ordinal: from the current
// revision below the partition (those pods are not updated yet), from
// the update revision otherwise (Kubernetes' newVersionedStatefulSetPod).
func newVersionedPod(in planInput, ordinal int) *corev1.Pod {
	s := in.currentSet
	ru := s.Spec.UpdateStrategy.RollingUpdate
	rolling := s.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType
	if (rolling && ru == nil && ordinal < startOrdinal(s)+int(s.Status.CurrentReplicas)) ||
		(ru != nil && ru.Partition != nil && ordinal < startOrdinal(s)+int(*ru.Partition)) {
		pod := newPod(in.currentSet, ordinal)
		setRevision(pod, in.currentRevision)
		return pod
	}
	pod := newPod(in.updateSet, ordinal)
	setRevision(pod, in.updateRevision)
	return pod
}

// firstUnhealthy is the lowest-ordinal unavailable pod, replicas first:
// the one pod OrderedReady may delete although it is not healthy.
func (p *plan) firstUnhealthy(minReadySeconds int32, now time.Time) *corev1.Pod {
	for _, pod := range p.replicas {
		if isUnavailable(pod, minReadySeconds, now) {
			return pod
		}
	}
	for i := len(p.condemned) - 1; i >= 0; i-- {
		if isUnavailable(p.condemned[i], minReadySeconds, now) {
			return p.condemned[i]
		}
	}
	return nil
}

// planReplica is phase 1 for one ordinal (Kubernetes' processReplica):
// its ops, and, if OrderedReady must wait here, why.
func planReplica(in planInput, pod *corev1.Pod, monotonic bool) (ops []op, wait string) {
	minReady := in.set.Spec.MinReadySeconds
	switch {
	case isTerminal(pod):
		if pod.DeletionTimestamp == nil {
			ops = append(ops, op{opDelete, pod, fmt.Sprintf("pod is %s: replacing it", pod.Status.Phase)})
		}
		return ops, fmt.Sprintf("pod %s is %s and will be recreated", pod.Name, pod.Status.Phase)
	case !isCreated(pod):
		if claimIsStale(in, pod) {
			return nil, fmt.Sprintf("a claim of pod %s still belongs to its previous pod", pod.Name)
		}
		return []op{{opCreate, pod, "missing"}}, fmt.Sprintf("pod %s was just created", pod.Name)
	}
	if isPending(pod) && !claimsReady(in, pod) {
		ops = append(ops, op{opEnsureClaims, pod, "pending pod"})
	}
	switch {
	case isTerminating(pod) && monotonic:
		return ops, fmt.Sprintf("pod %s is terminating", pod.Name)
	case !isRunningAndReady(pod) && monotonic:
		return ops, fmt.Sprintf("pod %s is not Running and Ready", pod.Name)
	case !isAvailable(pod, minReady, in.now) && monotonic:
		return ops, fmt.Sprintf("pod %s is not yet available (minReadySeconds %d)", pod.Name, minReady)
	}
	if !identityMatches(in.set, pod) || !storageMatches(in.set, pod) || !claimsMatchRetention(in, pod) {
		ops = append(ops, op{opUpdate, pod, "identity, storage or claim references"})
	}
	return ops, ""
}

// planCondemned is phase 3 for one pod above the range (Kubernetes'
// processCondemned): OrderedReady deletes it only if every pod below is
// healthy (or it is the unhealthy one), and then waits for it to go.
func planCondemned(ph *phase, pod, firstUnhealthy *corev1.Pod, minReady int32, now time.Time, monotonic bool) (wait string) {
	if isTerminating(pod) {
		if monotonic {
			return fmt.Sprintf("pod %s is terminating", pod.Name)
		}
		return ""
	}
	if monotonic && pod != firstUnhealthy && !isRunningAndReady(pod) {
		return fmt.Sprintf("pod %s is not Running and Ready", firstUnhealthy.Name)
	}
	if monotonic && pod != firstUnhealthy && !isAvailable(pod, minReady, now) {
		return fmt.Sprintf("pod %s is not yet available", firstUnhealthy.Name)
	}
	ph.items = append(ph.items, []op{{opDelete, pod, "scale down"}})
	if monotonic {
		return fmt.Sprintf("pod %s is being deleted", pod.Name)
	}
	return ""
}

// rollingUpdatePhase names phase 4, whose deletions the status counts.
const rollingUpdatePhase = "rolling update"

// planRollingUpdate is phase 4 (Kubernetes'
// updateStatefulSetAfterInvariantEstablished, the MaxUnavailableStatefulSet
// way, on by default in 1.37): delete pods not at the update revision,
// from the highest ordinal down to the partition, while fewer than
// maxUnavailable pods are unavailable. The deletions are always made one
// after the other.
func planRollingUpdate(in planInput, replicas []*corev1.Pod) phase {
	set, minReady := in.set, in.set.Spec.MinReadySeconds
	ph := phase{name: rollingUpdatePhase, ordered: true}
	partition, maxUnavailable := 0, 1
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		if ru.Partition != nil {
			partition = int(*ru.Partition)
		}
		maxUnavailable = maxUnavailableOf(ru.MaxUnavailable, replicasOf(set))
	}
	parallel := set.Spec.PodManagementPolicy == appsv1.ParallelPodManagement
	outdated := func(pod *corev1.Pod) bool { return revisionOf(pod) != in.updateRevision && !isTerminating(pod) }
	unavailable, unavailableOutdated := 0, 0
	for _, pod := range replicas {
		if isUnavailable(pod, minReady, in.now) {
			unavailable++
			if parallel && outdated(pod) {
				unavailableOutdated++
			}
		}
	}
	if unavailable >= maxUnavailable && unavailableOutdated == 0 {
		return ph // the budget is spent; the next pod becoming ready requeues the set
	}
	del := func(pod *corev1.Pod) {
		ph.items = append(ph.items, []op{{opDelete, pod, "rolling update to " + in.updateRevision}})
	}
	if parallel {
		// Two passes, so that pods already down are replaced first and
		// the budget goes to pods that are up: a single pass from the top
		// could spend it all on healthy pods and leave broken ones below.
		for i := len(replicas) - 1; i >= partition; i-- {
			if pod := replicas[i]; outdated(pod) && !isAvailable(pod, minReady, in.now) {
				del(pod)
			}
		}
		budget := maxUnavailable - unavailable
		for i := len(replicas) - 1; i >= partition && budget > 0; i-- {
			if pod := replicas[i]; outdated(pod) && !isUnavailable(pod, minReady, in.now) {
				del(pod)
				budget--
			}
		}
		return ph
	}
	for i := len(replicas) - 1; i >= partition && len(ph.items) < maxUnavailable-unavailable; i-- {
		if outdated(replicas[i]) {
			del(replicas[i])
		}
	}
	return ph
}

// maxUnavailableOf is spec.updateStrategy.rollingUpdate.maxUnavailable as
// a number of pods: a percentage of replicas rounded down, and at least 1
// (1 when unset).
func maxUnavailableOf(v *intstr.IntOrString, replicas int) int {
	one := intstr.FromInt32(1)
	n, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(v, one), replicas, false)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// claimsReady: every claim of the pod exists, with the references the
// retention policy wants.
func claimsReady(in planInput, pod *corev1.Pod) bool {
	for _, c := range claimsFor(in.set, ordinalOf(pod)) {
		if in.claim(c.Name) == nil {
			return false
		}
	}
	return claimsMatchRetention(in, pod)
}

// claimsMatchRetention: the pod's existing claims have the references the
// policy wants (a missing claim is picked up by a later sync).
func claimsMatchRetention(in planInput, pod *corev1.Pod) bool {
	for _, c := range claimsFor(in.updateSet, ordinalOf(pod)) {
		if claim := in.claim(c.Name); claim != nil && !claimOwnerUpToDate(claim, in.updateSet, pod) {
			return false
		}
	}
	return true
}

// claimIsStale: with whenScaled=Delete, a claim of the pod's ordinal that
// still names an earlier pod of the same name is about to be deleted by
// the garbage collector; the new pod waits rather than mount it.
func claimIsStale(in planInput, pod *corev1.Pod) bool {
	if retentionOf(in.set).WhenScaled == retain {
		return false
	}
	for _, c := range claimsFor(in.set, ordinalOf(pod)) {
		if claim := in.claim(c.Name); claim != nil && podOwner(pod).staleIn(claim) {
			return true
		}
	}
	return false
}
