// Package node is Kubernetes' Node authorizer (--authorization-mode=Node)
// and mkube's rule for kubelet fleets. A kubelet is the user
// system:node:<name> in the group system:nodes, and may do what concerns
// its own node only:
//
//   - read the Secrets, ConfigMaps, PersistentVolumeClaims (and their
//     PersistentVolumes, and those volumes' Secrets), ResourceClaims and
//     service-account tokens of the pods bound to it: the Graph holds
//     which node reaches which object, fed from the API server's watch
//     cache of pods and PersistentVolumes, as RBAC's policy is;
//   - read its own Node and write its Lease; list and watch only the pods
//     bound to it (fieldSelector spec.nodeName=<name>);
//   - create Nodes, mirror pods and pod status writes, whose objects
//     NodeRestriction admission (apiserver/admission) then limits to its
//     own;
//   - whatever else Kubernetes' system:node role lists (events,
//     services, ...), the same for every node.
//
// Anything else gets no opinion, and so RBAC's answer, which for a
// kubelet is no (Kubernetes binds system:node to nobody):
//
//	secrets "x" is forbidden: User "system:node:node01" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node 'node01' and this object
//
// FleetImpersonation is mkube's own: a process running many nodes
// (kubelet --nodes N) has one identity, in mkube:kubelet-fleets, which
// may impersonate any node (and nothing else), so that each of its nodes
// is judged here by its own name over the process's one connection.
//
// Where things live:
//
//	file                       what it holds
//	authorizer.go              the Authorizer: which kinds it judges, and how, from the node's name and the Graph
//	identity.go                Identify: whether a user is a node, and which
//	graph.go                   the Graph: which node reaches which object through its pods and volumes, kept as counts
//	references.go              what a pod bound to a node lets that node read
//	own.go                     the node's own objects: its Node, Lease, CSINode, and the pods bound to it
//	podcertificaterequests.go  the PodCertificateRequests of a node's pods
//	fleet.go                   FleetImpersonation
package node
