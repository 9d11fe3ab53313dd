// Package volumemanager is the kubelet's volume manager as far as it has
// left package kubelet (seed 000 step 12, seed 003 §四–七), after
// upstream's pkg/kubelet/volumemanager and its AtomicWriter
// (pkg/volume/util/atomic_writer.go): how a volume's files are written
// so that a reader never sees half an update, and the manager's memory
// of the node's pods (which pods' volumes were set up once, which pods'
// Multi-Attach error was reported), under a lock of its own rather than
// the Kubelet's.
//
// Setting the volumes up on the node's disk is still package kubelet's
// (volumes.go, volumes_claims.go, volumesources.go, emptydir.go,
// subpath.go there), which writes payloads with WriteAtomically and
// records each setup and teardown in a State.
//
// # Where things live
//
//	file             what it holds
//	atomicwriter.go  WriteAtomically: a ConfigMap, Secret, downward API or projected volume's files, swapped in at once
//	state.go         State: pods whose volumes were set up, Multi-Attach errors reported
//	doc.go           this map
package volumemanager
