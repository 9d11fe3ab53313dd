// Package framework is the vocabulary of mkube's scheduler, after
// kube-scheduler's scheduling framework: the types every plugin, the queue
// and the cache share.
//
// A scheduling cycle (seed 000, section 二) runs extension points in order:
//
//	Filter  (预选 predicates)  each FilterPlugin says whether the pod fits one node;
//	Score   (优选 priorities)  each ScorePlugin rates every node that fits, 0-100,
//	                           times the plugin's weight; the best total wins.
//
// A Filter answers with a *Status: nil means Success; otherwise a Code
// (Unschedulable, UnschedulableAndUnresolvable, Error) and human reasons
// such as "Insufficient cpu". When no node fits, FitError adds the reasons
// of all nodes up into Kubernetes' familiar message
// "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu."
//
// NodeInfo is what the scheduler knows of one node: the Node object and the
// sums of the requests of the pods bound or assumed there, kept up to date
// incrementally so a cycle never re-adds the pods of a node.
//
// ClusterEvent names a change in the cluster (a node added, a bound pod
// deleted...). Plugins declare which events could make a pod they rejected
// schedulable, and the queue retries exactly those pods.
package framework
