// Package controllermanager runs mkube's controllers, as
// kube-controller-manager does: one process, shared informers, one
// goroutine pool per controller.
//
// Seed 000, steps 5 and 6: the controller manager watches the API server;
// when a ReplicaSet (or ReplicationController) wants more pods than exist,
// its controller creates them. Each controller lives in its own package:
//
//   - replicaset: keeps spec.replicas pods running for each ReplicaSet;
//   - deployment: keeps one ReplicaSet per pod template for each Deployment;
//   - garbagecollector: deletes objects whose owners are gone, and honours
//     the orphan and foreground deletion finalizers;
//   - tainteviction: evicts pods from nodes with NoExecute taints they do
//     not tolerate, at once or after their tolerationSeconds (seed 000,
//     section 四).
package controllermanager
