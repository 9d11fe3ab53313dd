// Package nodestatus holds what the kubelet's node status heartbeat
// remembers between beats (seed 000 step 12: the node's Ready condition,
// its images, its memory pressure), after upstream's pkg/kubelet/nodestatus
// and the fields kubelet_node_status.go keeps on its Kubelet: the status
// last written, when the runtime last answered, and the node's containers'
// memory as last read, under a lock of its own rather than the Kubelet's.
//
// Registering the Node, assembling its status and writing it are still
// package kubelet's (node.go, nodestatus.go, csinode.go there), which
// asks a State whether a status is worth writing and whether the stats
// are due, and tells it what the runtime answered.
//
// # Where things live
//
//	file      what it holds
//	state.go  State: the last status written, the runtime's last answer, the memory stats
//	doc.go    this map
package nodestatus
