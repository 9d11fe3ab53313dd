// Package nodestatus is the kubelet's node registration and node status
// heartbeat (seed 000 step 12: the node's Ready condition, its images, its
// memory pressure), after upstream's pkg/kubelet/kubelet_node_status.go
// (registerWithAPIServer, updateNodeStatus, the fields it keeps on its
// Kubelet) and pkg/kubelet/nodestatus/setters.go (what the status says).
// Step 12 begins once a Node is registered: the scheduler binds pods to
// it, and the node lifecycle controller marks it NotReady when its
// heartbeats stop.
//
// A node's Manager registers the Node (creates it, or merges it with the
// one an earlier kubelet left), writes its CSINode and has its Lease
// created, then every StatusInterval renews the Lease and writes the
// status when it is due. It is given what it needs of its kubelet
// (Options): the node's Config, the node's API client and recorder, the
// container runtime (its stats and health), the fleet's shared Images and
// the Lease (package nodelease). Between beats it remembers, in a State
// under a lock of its own, the status last written, when the runtime last
// answered, and the node's containers' memory as last read.
//
// # Where things live
//
//	file          what it holds
//	manager.go    Manager, its Config and Options; Node, ContainersChanged
//	register.go   Register: the Node created or merged, with its CSINode and Lease
//	setters.go    the status: capacity, addresses, versions, images, conditions
//	heartbeat.go  Run: the heartbeats, the status written when due
//	runtime.go    what the status says of the runtime: version, images, down, memory used
//	images.go     Images: the runtime's images, asked for once for a fleet's nodes
//	csinode.go    the node's CSINode (volume limits)
//	state.go      State: the last status written, the runtime's last answer, the memory stats
//	doc.go        this map
package nodestatus
