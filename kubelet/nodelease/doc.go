// Package nodelease is the kubelet's node lease controller (upstream's
// nodeLeaseController, pkg/kubelet/nodelease in earlier releases): the
// node's Lease in kube-node-lease, the cheap heartbeat of KEP-589 that the
// node lifecycle controller reads to decide whether a node is alive. It
// comes with registration, before seed 000's step 12 can begin on the
// node, and is renewed every StatusInterval.
//
// Where things live:
//
//	file       what it holds
//	lease.go   the Controller: Renew writes the Lease last written again, or creates it
//	doc.go     this map
package nodelease
