// Package tainteviction is the taint eviction controller
// ("taint-eviction-controller" in kube-controller-manager, long known as
// the NoExecuteTaintManager): it deletes pods from nodes whose NoExecute
// taints they do not tolerate.
//
// Seed 000, section 四: NoExecute "将不会将 Pod 调度到具有该污点的 Node 上，
// 同时会将 Node 上已经存在的 Pod 驱逐出去". The first half is the scheduler's
// TaintToleration filter; the second half is this controller. After
//
//	kubectl taint node node01 check=mycheck:NoExecute
//
// the pods on node01 that do not tolerate the taint are deleted at once; a
// pod with a matching toleration and tolerationSeconds: 30 stays 30 seconds
// and is then deleted; and
//
//	kubectl taint node node01 check=mycheck:NoExecute-
//
// before those 30 seconds are up cancels its eviction.
//
// # The rule
//
// For a pod bound to a node, look at the node's NoExecute taints only
// (NoSchedule and PreferNoSchedule never evict) and, for each taint, at
// the first of the pod's tolerations that tolerates it (k8s.io/api's
// Toleration.ToleratesTaint, the matching Kubernetes' scheduler uses too):
//
//   - a taint no toleration tolerates → delete the pod now;
//   - a toleration with tolerationSeconds ≤ 0 → delete the pod now;
//   - tolerations without tolerationSeconds only → the pod stays for ever;
//   - otherwise each taint tolerated for tolerationSeconds starts a
//     countdown of that length; the pod is deleted when the first one runs
//     out, so with one clock for all of them the minimum tolerationSeconds
//     wins.
//
// Worked example: node01 gets check=mycheck:NoExecute at 10:00:00.
//
//	pod a: no tolerations                                               → deleted at 10:00:00
//	pod b: {key: check, operator: Equal, value: mycheck,
//	        effect: NoExecute, tolerationSeconds: 60}                   → deleted at 10:01:00
//	pod c: {key: check, operator: Exists}                               → stays: no tolerationSeconds
//	pod d: {operator: Exists, effect: NoExecute, tolerationSeconds: 0}  → deleted at 10:00:00
//
// If the taint is removed at 10:00:30, pod b's eviction is cancelled and it
// keeps running.
//
// # When a countdown starts
//
// A countdown starts when this controller first sees the taint on the pod's
// node with the pod there: when the taint appears, or when a pod is bound
// to a node that already has it. That is what Kubernetes uses too. The
// taint's timeAdded field is not used, as in Kubernetes: only some clients
// write it (the node lifecycle controller does; kubectl taint and mkube's
// API server do not), and it was read on another machine's clock, while
// the deadline is kept on this controller's clock (injected, so tests use
// a fake one). The price, also Kubernetes': a restarted controller starts
// every countdown again, so a pod may stay longer than tolerationSeconds,
// never shorter.
//
// One difference: Kubernetes keeps one countdown per pod, started with the
// first taint it tolerates for a while, and keeps that first deadline
// while the pod keeps tolerating its node's taints. mkube keeps one per
// taint, so a second taint tolerated for less time is counted from when it
// appeared. With a single taint, the seed's case, the two agree.
//
// # Eviction
//
// Evicting is an ordinary graceful DELETE of the pod, with its UID as a
// precondition so that a new pod that took the same name is never deleted
// by mistake. The API server only sets deletionTimestamp (the pod's
// terminationGracePeriodSeconds later); the node's kubelet stops the
// containers and finishes the deletion. A pod already terminating is left
// alone. A pod owned by a ReplicaSet is recreated by the ReplicaSet
// controller, and the scheduler will not put the new one on the tainted
// node: its TaintToleration filter rejects nodes with untolerated NoExecute
// taints as well as NoSchedule ones. Each eviction is recorded as the
// event TaintManagerEviction "Marking for deletion Pod default/web-1", and
// each cancelled one as "Cancelling deletion of Pod default/web-1", with
// Kubernetes' wording.
//
// # Who taints nodes
//
// Besides people with kubectl taint, the node lifecycle controller
// (package nodelifecycle) adds node.kubernetes.io/not-ready and
// node.kubernetes.io/unreachable NoExecute taints to nodes that stop
// reporting. The API server's DefaultTolerationSeconds admission gives
// every pod that does not say otherwise a toleration of 300s for each of
// them, so a node that is briefly unreachable does not lose its pods, and
// one that is gone for good has them recreated elsewhere after 5 minutes.
//
// # Pipeline
//
// Informer handlers (a node's NoExecute taints changed → each of its pods;
// a pod's node, tolerations or deletion changed → that pod) → queue of pod
// keys → Run → workers (queue.Work) → sync. A scheduled eviction is
// the same pod key put back with AddAfter at its deadline. sync reads the
// pod and its node from the caches and decides again every time, so
// cancelling needs no timer to be stopped: when a cancelled eviction's
// timer fires, sync finds nothing to do.
//
// Where things live:
//
//	file            what it holds
//	controller.go   the Controller: its handlers (which node and pod changes queue which pods) and Run
//	tolerations.go  the rule: decide's verdict for one pod on one node (now, later, never) and the limits behind it
//	sync.go         sync: evict now, start or cancel a countdown; the eviction and its events
package tainteviction
