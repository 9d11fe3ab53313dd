// Package volumemanager is the kubelet's volume manager as far as it has
// left package kubelet (seed 000 step 12, seed 003 §四–七), after
// upstream's pkg/kubelet/volumemanager, its emptyDir plugin
// (pkg/volume/emptydir) and its AtomicWriter
// (pkg/volume/util/atomic_writer.go): where a pod's volumes are on the
// node, emptyDirs on disk and in memory (a tmpfs in the node's mount
// table), how a volume's files are written so that a reader never sees
// half an update, and the manager's memory of the node's pods (which
// pods' volumes were set up once, which pods' Multi-Attach error was
// reported), under a lock of its own rather than the Kubelet's.
//
// Setting the volumes up on the node's disk, volume by volume, is still
// package kubelet's (volumes.go, volumes_claims.go, volumesources.go,
// subpath.go there), which calls these and records each setup and
// teardown in a State.
//
// # Where things live
//
//	file             what it holds
//	paths.go         PodDir, Dir, Plugin: a pod's and a volume's directories on the node
//	emptydir.go      emptyDir volumes: drwxrwxrwx on disk, or a tmpfs of the pod's memory
//	atomicwriter.go  WriteAtomically: a ConfigMap, Secret, downward API or projected volume's files, swapped in at once
//	state.go         State: pods whose volumes were set up, Multi-Attach errors reported
//	doc.go           this map
package volumemanager
