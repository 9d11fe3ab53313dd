// Package volumemanager holds the kubelet's volume manager's memory of
// the node's pods (seed 000 step 12, seed 003 §四–七), after upstream's
// pkg/kubelet/volumemanager (its actual state of the world, reduced to
// what mkube needs): which pods' volumes were set up once, and which
// pods' Multi-Attach error was reported, under a lock of its own rather
// than the Kubelet's.
//
// Setting the volumes up on the node's disk is still the kubelet
// package's (volumes.go, volumes_claims.go, volumesources.go,
// emptydir.go, subpath.go, atomicwriter.go there), which records each
// setup and teardown here.
//
// # Where things live
//
//	file       what it holds
//	state.go   State: pods whose volumes were set up, Multi-Attach errors reported
//	doc.go     this map
package volumemanager
