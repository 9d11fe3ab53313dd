// Package framework is the vocabulary of mkube's scheduler, after
// kube-scheduler's scheduling framework: the types every plugin, the queue
// and the cache share.
//
// A scheduling cycle (seed 000, section 二) runs extension points in order:
//
//	PreFilter  once     each plugin prepares what its Filter needs, or says Skip
//	Filter     per node (预选 predicates) can the pod run here? first rejection wins
//	PreScore   once     on the nodes that passed, each plugin prepares, or says Skip
//	Score      per node (优选 priorities) a raw score per plugin
//	Normalize  once     each plugin maps its raw scores onto 0-100
//	                    total = Σ score × weight; the best total wins
//	PostFilter once     only if no node passed Filter: preemption
//
// Why the "Pre" steps: a rule like inter-pod affinity depends on every pod
// in the cluster. Computed per node, a cycle would cost pods × nodes; a
// PreFilter counts once, into the CycleState, and each Filter then looks up
// its node in constant time. Skip lets the many pods that ask nothing of a
// plugin (no host ports, no affinity) not pay for it at all.
//
// A Filter answers with a *Status: nil means Success; otherwise a Code
// (Unschedulable, UnschedulableAndUnresolvable, Error) and human reasons
// such as "Insufficient cpu". When no node fits, FitError adds the reasons
// of all nodes up into Kubernetes' familiar message
// "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu."
//
// PodInfo is a pod with what is computed from it once (requests, parsed
// affinity terms); NodeInfo is what the scheduler knows of one node: the
// Node object, the pods bound or assumed there, the sums of their requests,
// the host ports they hold, kept up to date incrementally so a cycle never
// re-adds the pods of a node. NodeInfoLister is the whole cluster as one
// cycle sees it (the cache's Snapshot).
//
// When Filter finds no node, preemption (the PostFilter step, package
// framework/preemption) asks what-if questions on clones of a node and of
// the CycleState; PreFilterExtensions keep PreFilter's counts true as it
// takes pods off, and RunFilterPluginsWithNominatedPods counts the pods
// already nominated to a node (preemption.go).
//
// ClusterEvent names a change in the cluster (a node added, a bound pod
// deleted...). Plugins declare which events could make a pod they rejected
// schedulable, and the queue retries exactly those pods.
//
// Where things live:
//
//	file                what it holds
//	framework.go        the plugin interfaces (Plugin, PreFilter, Filter, PreScore, Score, NormalizeScore, EnqueueExtensions), PluginSpec, and the Framework that runs them in order
//	binding_cycle.go    Reserve, Unreserve and PreBind: the plugins of the binding cycle, and how they are run
//	preemption.go       PreFilterExtensions, RunFilterPluginsWithNominatedPods, Candidate: what preemption asks of the framework
//	cycle_state.go      CycleState, what plugins keep for the rest of one cycle; skipped plugins
//	status.go           Code and Status, a plugin's verdict with its human reasons
//	fit_error.go        Diagnosis and FitError: "0/3 nodes are available: ..."
//	types.go            PodInfo, QueuedPodInfo, NodeInfo: a pod and a node with what is computed from them once
//	resource.go         Resource, the sums of cpu, memory, pods and scalar resources the scheduler counts
//	pod_requests.go     PodRequests and NonZeroPodRequests: what a pod asks for, with Kubernetes' stand-ins for requests left out
//	affinity_term.go    AffinityTerm: a parsed inter-pod affinity term and which pods it matches
//	host_ports.go       HostPortInfo, the host ports taken on a node, and their conflicts
//	normalize_score.go  DefaultNormalizeScore: raw scores onto 0-100, optionally reversed
//	events.go           ClusterEvent, EventResource and ActionType: the changes plugins register for
//	listers.go          NodeInfoLister, the namespace, Service, ReplicaSet and RC listers, and Handle, what the scheduler lends its plugins
//	storage_listers.go  StorageLister, CSINodeLister and StorageWriter for the volume plugins
package framework
