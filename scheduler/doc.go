// Package scheduler is mkube's kube-scheduler: it assigns every pod that
// names no node to one, steps 9 and 10 of seed 000's pod creation flow.
//
//	step 9   the scheduler watches the API server and sees the unbound pod
//	         (spec.nodeName == ""): eventhandlers.go puts it in the queue.
//	         scheduleOne takes it and runs the algorithm of seed section 二
//	         on a snapshot of the cluster:
//	           Filter (predicates)  drop the nodes the pod cannot run on;
//	           Score  (priorities)  rate the rest, 0-100 per plugin × weight;
//	           select               the best score; ties are broken at random.
//	         The pod is then assumed on that node in the cache, so the next
//	         pod already sees the node's resources taken, and the Reserve
//	         plugins keep what else it takes (VolumeBinding: its volumes).
//	step 10  a binding goroutine first runs the PreBind plugins (VolumeBinding:
//	         the pod's claims get their volumes, and it waits until they are
//	         bound), then POSTs pods/NAME/binding; the API server sets
//	         spec.nodeName and stores it in etcd. The pod informer then sees
//	         the pod bound, which confirms the assumption. The scheduler
//	         records a Normal "Scheduled" event.
//
// The policies (seed 000 section 二 and 三, seed 003), one plugin each,
// in the default profile's order (config.DefaultPlugins):
//
//	predicate / priority                              plugin                            weight
//	CheckNodeUnschedulable                            NodeUnschedulable
//	PodFitsHost                                       NodeName
//	PodToleratesNodeTaints / TaintTolerationPriority  TaintToleration                   3
//	PodSelectorMatches / NodeAffinityPriority         NodeAffinity                      2
//	PodFitsHostPorts                                  NodePorts
//	PodFitsResources / LeastRequestedPriority         NodeResourcesFit                  1
//	NoDiskConflict (and ReadWriteOncePod claims)      VolumeRestrictions
//	MaxCSIVolumeCountPred                             NodeVolumeLimits
//	CheckVolumeBinding                                VolumeBinding
//	NoVolumeZoneConflict                              VolumeZone
//	SelectorSpreadPriority / topology spread          PodTopologySpread                 2
//	MatchInterPodAffinity / InterPodAffinityPriority  InterPodAffinity                  2
//	BalancedResourceAllocation                        NodeResourcesBalancedAllocation   1
//	ImageLocalityPriority                             ImageLocality                     1
//
// A --config file (package config) enables, disables and weighs them.
//
// Every decision is explained (package explanation): the Binding carries,
// in the annotation mkube.io/scheduling-explanation, each evaluated node's
// verdict (the filter that rejected it and why, or each plugin's score,
// weight and the total); the API server copies it onto the pod, and
// `mkube explain pod NAME` prints it. The log has the one-line form
// ("scheduling explanation"); the Scheduled event keeps Kubernetes'
// sentence, "Successfully assigned default/web-1 to node01".
//
// A pod that fits nowhere may preempt (seed 003, "Pod 优先级和抢占式调度";
// package framework/preemption, Kubernetes' DefaultPreemption PostFilter
// plugin): on a node that failed only for reasons evicting pods can fix
// (resources, pod count, host ports, anti-affinity), pods of lower
// spec.priority are evicted, as few and as unimportant as will do, and
// PodDisruptionBudgets are spared where possible. The scheduler nominates
// the pod to that node (status.nominatedNodeName), deletes the victims
// gracefully with a Normal "Preempted" event each ("Preempted by pod <uid>
// on node node01"), and puts the pod back in the queue; their deletion
// retries it. Until it is bound, it counts on that node for every pod of
// lower or equal priority, which therefore cannot take the room.
//
// Otherwise it stays Pending: it gets a Warning FailedScheduling event and
// the condition PodScheduled=False, reason Unschedulable, both with
// Kubernetes' message, which ends with what preemption found ("0/3 nodes
// are available: 1 node(s) were unschedulable, 2 Insufficient cpu.
// preemption: 0/3 nodes are available: 1 Preemption is not helpful for
// scheduling, 2 No preemption victims found for incoming pod.."), and
// waits in the queue until a cluster event may let it fit (a node added,
// relabelled, uncordoned; a pod deleted or finished), or 5 minutes at most.
//
// Where things live:
//
//	scheduler.go                 Config, New, Start (the informers: a standby runs them before it leads), Run (the loops)
//	eventhandlers.go             informer events → queue and cache
//	listers.go                   namespaces (namespaceSelector), Services, ReplicaSets, RCs (spreading) for the plugins
//	storage_listers.go           claims, volumes, classes and CSINodes for the volume plugins; their writes
//	schedule_one.go              one scheduling cycle: filter, score, select, assume
//	binding.go                   the asynchronous binding (step 10), with the explanation
//	failure.go                   FailedScheduling: event, condition, nomination, requeue
//	preemption.go                PostFilter: preemption, evicting the victims
//	framework/                   Status, CycleState, NodeInfo, plugins' interfaces, FitError
//	framework/plugins/...        one package per predicate or priority; registry.go
//	framework/preemption/        choosing victims and the node (DefaultPreemption)
//	config/                      the --config file: profiles, weights
//	explanation/                 the record of a decision, and its table
//	queue/                       activeQ, backoffQ, unschedulable pods; nominated pods
//	metrics/                     kube-scheduler's Prometheus series (attempts, their duration, pending pods, preemption)
//	cache/                       node infos, assume/forget, snapshots
package scheduler
