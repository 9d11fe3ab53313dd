// Package controllermanager runs mkube's controllers, as
// kube-controller-manager does: one process, one shared informer per
// resource, one pool of workers per controller.
//
// Seed 000, steps 5 and 6: the controller manager watches the API server;
// when a ReplicaSet (or ReplicationController) wants more pods than exist,
// its controller creates them. Run starts these controllers, each in its
// own package:
//
//   - replicaset: keeps spec.replicas pods for each ReplicaSet, adopting
//     and releasing pods by their labels (seed 000 step 6; seed 003 三.2);
//   - replicationcontroller: the same controller for ReplicationControllers,
//     replicaset.NewReplicationManager (seed 000 step 6; seed 003 三.1);
//   - deployment: keeps one ReplicaSet per pod template for each Deployment
//     and rolls replicas from the old ones to the new (seed 003 三.3);
//   - endpoints: lists the ready and not-ready pod IPs behind each Service
//     with a selector, in the Endpoints of its name (seed 003 九);
//   - disruption: counts the healthy pods of each PodDisruptionBudget, so
//     the API server can refuse the evictions of kubectl drain that would
//     break it (seed 000 五);
//   - namespace: empties a Terminating namespace, then removes its
//     finalizer and the namespace (seed 003 八);
//   - serviceaccount: gives every namespace its "default" ServiceAccount
//     (seed 003 六.3), and gives it back if it is deleted;
//   - rootcacertpublisher (with --root-ca-file): puts the cluster's CA into
//     every namespace as the ConfigMap kube-root-ca.crt;
//   - garbagecollector: deletes objects whose owners are gone, and honours
//     the orphan and foreground deletion finalizers, so deleting a
//     Deployment takes its ReplicaSets and pods with it (seed 003 三);
//   - tainteviction: evicts pods from nodes with NoExecute taints they do
//     not tolerate, at once or after their tolerationSeconds (seed 000 四);
//   - nodelifecycle: marks the nodes whose kubelet went silent Unknown,
//     and taints nodes by their conditions, not-ready and unreachable
//     among them (seed 003 十一.6.5);
//   - resourcequota: copies each ResourceQuota's spec.hard into its
//     status and recounts status.used, giving back what deleted and
//     finished objects held (seed 003 八).
//
// Every controller is built as New(d controller.Deps, o Options): d, made
// once by Run and shared by all, holds the API client, the shared
// informers, the event recorder, the log and the clock. o holds that
// controller's own tuning, Workers first, and a zero field means
// Kubernetes' default, so Options{} is kube-controller-manager's setup: 5
// workers for ReplicaSets, ReplicationControllers, Deployments, Endpoints,
// ServiceAccounts and ResourceQuotas, 1 for disruption budgets, 10 for
// namespaces, 20 for the garbage collector, 8 for taint eviction and 8
// for node taints.
package controllermanager
